// The api-latency and device-flood baseline (not a test): a bare Fastify answering
// {hello: 'world'} on GET / (and the JSON body it was sent on POST /), in its own process,
// the same Fastify version as the product (resolved from cloud/), default options (no logger). Listens on BENCH_PORT at 127.0.0.1 and sends
// { type: 'listening' } over IPC.
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { ROOT } from './harness.js'

interface Fastify {
  get: (path: string, handler: () => Promise<unknown>) => void
  post: (path: string, handler: (req: { body: unknown }) => Promise<unknown>) => void
  listen: (opts: { port: number; host: string }) => Promise<string>
}
const require = createRequire(join(ROOT, 'cloud', 'package.json'))
const fastify = require('fastify') as () => Fastify
const app = fastify()
app.get('/', async () => ({ hello: 'world' }))
app.post('/', async (req) => ({ data: req.body }))
await app.listen({ port: Number(process.env.BENCH_PORT), host: '127.0.0.1' })
process.send!({ type: 'listening' })
process.on('disconnect', () => process.exit(0))
