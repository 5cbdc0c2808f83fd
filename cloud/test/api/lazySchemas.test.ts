// Route schemas are compiled on a route's first use, not at start-up (platform/http/lazySchemas.ts):
// the app is ready with its schemas still pending; the first request compiles the ones it
// needs and validates and serialises exactly as before (a refused body names its field, an
// answer carries its schema's fields); every schema of the API compiles; a schema the
// compiler refuses fails on use with the error envelope, not at start; a running service
// compiles what no request needed yet in the background, after its warm-up delay.
import t from 'tap'
import { build } from '../helpers.js'
import { buildApp } from '../../src/app.js'
import { compilesInProcess } from '../../src/platform/http/lazySchemas.js'
import { testConfig } from '../../src/config.js'
import { startRunning, tempDir, until } from '../fixtures/processes.js'

t.test('schemas wait for their route; the first request compiles what it needs and validates as before', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const atStart = h.app.routeSchemas.pendingCount
  t.ok(atStart > 100, `ready with the route schemas not compiled (${atStart} pending)`)

  const bad = await h.req('POST', '/v1/api-keys', apiKey, { name: 5, permissions: 'all' })
  t.equal(bad.statusCode, 422)
  t.equal(bad.json().error, 'validation_error')
  t.match(bad.json().message, /name/, 'the message names the field (the compiled validator’s errors)')
  const afterOne = h.app.routeSchemas.pendingCount
  t.ok(afterOne < atStart, 'that route’s schemas are compiled now')

  const ok = await h.req('POST', '/v1/api-keys', apiKey, { name: 'ci', permissions: ['screen.view'] })
  t.equal(ok.statusCode, 201)
  t.match(ok.json().data, { name: 'ci', permissions: ['screen.view'], secret: String })
  const afterTwo = h.app.routeSchemas.pendingCount
  t.ok(afterTwo < afterOne, 'its answer’s serialiser on its first answer')
  t.equal((await h.req('POST', '/v1/api-keys', apiKey, { name: 'ci2', permissions: ['screen.view'] })).statusCode, 201)
  t.equal(h.app.routeSchemas.pendingCount, afterTwo, 'compiled once: the same answer again compiles nothing more')

  const me = await h.req('GET', '/v1/me', apiKey)
  t.equal(me.statusCode, 200)
  t.match(me.json().data, { workspace: { name: 'Test workspace' } }, 'answers serialised by their schema')

  t.doesNotThrow(() => h.app.routeSchemas.compileAll(), 'every schema of the API compiles')
  t.equal(h.app.routeSchemas.pendingCount, 0)
  t.equal((await h.req('GET', '/v1/me', apiKey)).statusCode, 200, 'and still answers after')
})

t.test('a second app in the process takes the functions the first compiled, and validates the same', async (t) => {
  const first = await build(t)
  const key = (await first.workspace()).apiKey
  t.equal((await first.req('POST', '/v1/api-keys', key, { name: 'ci', permissions: ['screen.view'] })).statusCode, 201)
  const known = compilesInProcess()
  const second = await build(t)
  const { apiKey } = await second.workspace()
  const bad = await second.req('POST', '/v1/api-keys', apiKey, { name: 5, permissions: 'all' })
  t.equal(bad.statusCode, 422)
  t.match(bad.json().message, /name/, "the shared validator's errors are this request's")
  t.equal((await second.req('POST', '/v1/api-keys', apiKey, { name: 'ci', permissions: ['screen.view'] })).statusCode, 201)
  t.equal(compilesInProcess(), known, 'nothing compiled again')
})

t.test('a schema the compiler refuses fails its route with the error envelope, not the start', async (t) => {
  const app = await buildApp(testConfig())
  t.after(() => app.close())
  app.get('/broken', { config: { auth: 'none' }, schema: { querystring: { type: 'no-such-type' } } }, async () => ({ ok: true }))
  await app.ready()
  t.throws(() => app.routeSchemas.compileAll(), 'the compiler’s error, when compiled')
  const res = await app.inject({ method: 'GET', url: '/broken' })
  t.equal(res.statusCode, 500)
  t.match(res.json(), { error: String, message: String })
})

t.test('the running service compiles the pending schemas in the background after its warm-up delay', async (t) => {
  const dataDir = tempDir(t, 'svc-warmup-')
  const running = await startRunning(t, testConfig({ dataDir, dbFile: ':memory:', host: '127.0.0.1', httpPort: 0, mqttPort: -1, schemaWarmupMs: 200 }))
  const schemas = running.app.routeSchemas
  t.ok(schemas.pendingCount > 100, 'pending when it starts listening')
  const res = await fetch(`http://127.0.0.1:${running.httpPort}/v1/status`)
  t.equal(res.status, 200, 'answering meanwhile')
  t.equal(await until(5 * 60_000, () => (schemas.pendingCount === 0 ? true : undefined)), true, 'all compiled after the delay')

  // The end is told (the service logs it: a bench waits for it before measuring).
  const app = await buildApp(testConfig())
  t.after(() => app.close())
  await app.ready()
  const before = app.routeSchemas.pendingCount
  let told: number | undefined
  app.routeSchemas.compileInBackground(
    0,
    (err) => t.fail(`a schema did not compile: ${String(err)}`),
    (n) => (told = n),
  )
  t.equal(await until(5 * 60_000, () => told), before, 'told once every pending schema is compiled, with how many')
  t.equal(app.routeSchemas.pendingCount, 0)

  const later = await startRunning(
    t,
    testConfig({ dataDir: tempDir(t, 'svc-warmup-'), dbFile: ':memory:', host: '127.0.0.1', httpPort: 0, mqttPort: -1, schemaWarmupMs: 60_000 }),
  )
  const pending = later.app.routeSchemas.pendingCount
  await later.close()
  t.equal(later.app.routeSchemas.pendingCount, pending, 'closing before the delay: nothing compiled, no timer left behind')
})
