// Prints the served interface document (GET /v1/openapi.json) of an in-memory cloud to
// stdout, for generators and linters: `tsx cloud/scripts/openapi-dump.ts > openapi.json`.
import { buildApp } from '../src/app.js'
import { testConfig } from '../src/config.js'

const app = await buildApp(testConfig({ logLevel: 'silent' }))
try {
  await app.ready()
  const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
  process.stdout.write(`${JSON.stringify(res.json(), null, 2)}\n`)
} finally {
  await app.close()
}
