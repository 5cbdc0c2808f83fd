import t from 'tap'
import { build, tempDatabase } from '../helpers.js'

t.test('unknown path answers 404 not_found "No route here." with or without a credential; a wrong method 405', async (t) => {
  const h = await build(t)
  for (const token of [null, 'garbage']) {
    const res = await h.req('GET', '/v1/nope', token)
    t.equal(res.statusCode, 404)
    t.same(res.json(), { error: 'not_found', message: 'No route here.' })
  }
  // A known path asked with a method it does not take: 405 with the methods it does.
  const wrongMethod = await h.req('PUT', '/v1/me', null)
  t.equal(wrongMethod.statusCode, 405)
  t.equal(wrongMethod.json().error, 'method_not_allowed')
  t.equal(wrongMethod.headers.allow, 'GET, HEAD')
})

t.test('request id: a valid x-svc-request-id is echoed, an invalid one replaced', async (t) => {
  const h = await build(t)
  const ok = await h.req('GET', '/v1/status', null, undefined, { 'x-svc-request-id': 'trace.ABC_123-x' })
  t.equal(ok.headers['x-svc-request-id'], 'trace.ABC_123-x')
  for (const bad of ['has space', 'x'.repeat(121), 'semi;colon', 'ünï']) {
    const res = await h.req('GET', '/v1/status', null, undefined, { 'x-svc-request-id': bad })
    t.equal(res.statusCode, 200)
    t.not(res.headers['x-svc-request-id'], bad)
    t.match(res.headers['x-svc-request-id'], /^req_[0-9a-f]{32}$/)
  }
  const max = 'a'.repeat(120)
  t.equal((await h.req('GET', '/v1/status', null, undefined, { 'x-svc-request-id': max })).headers['x-svc-request-id'], max)
})

t.test('bad input gets the envelope, never a 5xx', async (t) => {
  const h = await build(t, { bodyLimitBytes: 2048 })
  const { apiKey } = await h.workspace()
  const raw = (payload: string, type = 'application/json') =>
    h.app.inject({ method: 'POST', url: '/v1/nodes', headers: { authorization: `Bearer ${apiKey}`, 'content-type': type }, payload })

  const malformed = await raw('{"name": ')
  t.equal(malformed.statusCode, 400)
  t.equal(malformed.json().error, 'bad_request')
  t.type(malformed.json().message, 'string')

  const empty = await raw('')
  t.equal(empty.statusCode, 400)
  t.equal(empty.json().error, 'bad_request')

  const wrongType = await raw(JSON.stringify({ name: 42 }))
  t.equal(wrongType.statusCode, 422)
  t.equal(wrongType.json().error, 'validation_error')
  t.match(wrongType.json().message, /name/)

  const missing = await raw(JSON.stringify({}))
  t.equal(missing.statusCode, 422)
  t.match(missing.json().message, /name is required/)

  const array = await raw(JSON.stringify([1, 2]))
  t.equal(array.statusCode, 422)

  const big = await raw(JSON.stringify({ name: 'x'.repeat(5000) }))
  t.equal(big.statusCode, 413)
  t.same(big.json().error, 'too_large')

  const text = await raw('name=x', 'text/plain')
  t.equal(text.statusCode, 415)
  t.equal(text.json().error, 'unsupported_type')

  const badEnum = await raw(JSON.stringify({ name: 'a', kind: 'planet' }))
  t.equal(badEnum.statusCode, 422)

  // nothing half-written: no node exists after all of that
  const list = await h.req('GET', '/v1/nodes', apiKey)
  t.same(list.json().data, [])
})

t.test('a busy database answers 503 database_busy with Retry-After: 2 and a requestId', async (t) => {
  const { SqliteDatabase } = await import('../../src/platform/db/SqliteDatabase.js')
  const { db, file } = await tempDatabase(t)
  const h = await build(t, { dbFile: file }, { db })
  const { apiKey } = await h.workspace()
  const other = await SqliteDatabase.open(file, 50)
  t.after(() => other.close())
  // Another process holds the write lock.
  let release!: () => void
  const held = other.transaction(() => new Promise<void>((r) => (release = r)))
  await new Promise((r) => setTimeout(r, 20))
  const res = await h.req('POST', '/v1/nodes', apiKey, { name: 'Lobby' })
  release()
  await held
  t.equal(res.statusCode, 503)
  t.equal(res.json().error, 'database_busy')
  t.equal(res.headers['retry-after'], '2')
  t.type(res.json().requestId, 'string')
  t.equal(res.json().requestId, res.headers['x-svc-request-id'])
  const after = await h.req('POST', '/v1/nodes', apiKey, { name: 'Lobby' })
  t.equal(after.statusCode, 201)
})

t.test('a server fault answers 500 internal_error with requestId and no stack', async (t) => {
  const { db } = await tempDatabase(t)
  const h = await build(t, {}, { db })
  const { apiKey } = await h.workspace()
  // Break the storage under the running app: the next query fails in an unexpected way.
  await db.run('DROP TABLE nodes')
  const res = await h.req('GET', '/v1/nodes', apiKey, undefined, { 'x-svc-request-id': 'trace-500' })
  t.equal(res.statusCode, 500)
  const body = res.json()
  t.equal(body.error, 'internal_error')
  t.equal(body.requestId, 'trace-500')
  t.notMatch(res.body, /at |\.ts:|SQLITE/, 'no stack or driver text leaks')
})
