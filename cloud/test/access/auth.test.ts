import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build, makeKey } from '../helpers.js'

// The tests share one app, each in a workspace of its own. Two have an app of their own: one reads every stored key, one moves the clock a month on (the others write literal expiries).
t.test('authentication over HTTP, on one app', async (t) => {
  const shared = await build(t)
  t.test('401 missing_credentials / invalid_credentials', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const none = await h.req('GET', '/v1/me', null)
    t.equal(none.statusCode, 401)
    t.equal(none.json().error, 'missing_credentials')

    const basic = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: 'Basic dXNlcjpwYXNz' } })
    t.equal(basic.statusCode, 401)
    t.equal(basic.json().error, 'missing_credentials')

    for (const bad of [
      `ak_us_live_${'x'.repeat(32)}`,
      'ak_us_live_short',
      apiKey.slice(0, -1) + (apiKey.endsWith('a') ? 'b' : 'a'),
      `ust_${'y'.repeat(40)}`,
      'whatever',
    ]) {
      const res = await h.req('GET', '/v1/me', bad)
      t.equal(res.statusCode, 401, bad)
      t.equal(res.json().error, 'invalid_credentials')
    }
    t.equal((await h.req('GET', '/v1/me', apiKey)).statusCode, 200)
  })

  t.test('403 forbidden names the missing permission', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const viewer = await makeKey(h, apiKey, ['node.view'])
    const res = await h.req('POST', '/v1/nodes', viewer.secret, { name: 'Lobby' })
    t.equal(res.statusCode, 403)
    t.same(res.json(), { error: 'forbidden', message: 'Missing permission: node.edit' })
    t.equal((await h.req('GET', '/v1/nodes', viewer.secret)).statusCode, 200)
    // 401 comes before validation and before 403.
    t.equal((await h.req('POST', '/v1/nodes', null, { bad: true })).statusCode, 401)
  })

  t.test('expired and revoked keys answer 401 invalid_credentials; lastUsedAt is recorded', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const res = await h.req('POST', '/v1/api-keys', apiKey, { name: 'short', permissions: ['node.view'], expiresAt: '2026-06-01T13:00:00Z' })
    t.equal(res.statusCode, 201)
    const short = res.json().data
    t.equal(short.expired, false)
    t.equal(short.lastUsedAt, null)
    t.equal((await h.req('GET', '/v1/nodes', short.secret)).statusCode, 200)
    const seen = (await h.req('GET', `/v1/api-keys/${short.id}`, apiKey)).json().data
    t.equal(seen.lastUsedAt, '2026-06-01T12:00:00.000Z')
    h.clock.advance(3600_000)
    const expired = await h.req('GET', '/v1/nodes', short.secret)
    t.equal(expired.statusCode, 401)
    t.equal(expired.json().error, 'invalid_credentials')
    t.equal((await h.req('GET', `/v1/api-keys/${short.id}`, apiKey)).json().data.expired, true)

    const other = await makeKey(h, apiKey, ['node.view'])
    const revoked = await h.req('POST', `/v1/api-keys/${other.id}/revoke`, apiKey)
    t.equal(revoked.statusCode, 200)
    t.type(revoked.json().data.revokedAt, 'string')
    t.equal((await h.req('GET', '/v1/nodes', other.secret)).json().error, 'invalid_credentials')
    const again = await h.req('POST', `/v1/api-keys/${other.id}/revoke`, apiKey)
    t.equal(again.statusCode, 409)
    t.equal(again.json().error, 'revoked')
    t.equal((await h.req('DELETE', `/v1/api-keys/${other.id}`, apiKey)).json().error, 'revoked')
  })
})

t.test('a key is stored only as a hash; preview is the first characters', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  t.match(apiKey, /^ak_us_live_[A-Za-z0-9]{32}$/)
  const rows = await servicesOf(h.app).db.all<Record<string, unknown>>('SELECT * FROM api_keys')
  for (const r of rows) for (const v of Object.values(r)) t.not(v, apiKey)
  const key = (await h.req('GET', '/v1/api-keys', apiKey)).json().data[0]
  t.ok(apiKey.startsWith(key.preview))
  t.ok(key.preview.length < apiKey.length - 20)
  t.notOk('secret' in key)
})

t.test('GET /v1/me: actor shapes for a key and for a user', async (t) => {
  const h = await build(t)
  const { apiKey, workspaceId } = await h.workspace('Acme')
  const me = (await h.req('GET', '/v1/me', apiKey)).json().data
  t.equal(me.actor.kind, 'key')
  t.match(me.actor.id, /^key_/)
  t.equal(me.actor.nodeId, null)
  t.same(me.workspace, { id: workspaceId, name: 'Acme' })
  t.ok(me.permissions.includes('screen.view'))
  t.equal(me.grant, 'all')

  const user = await servicesOf(h.app).users.create(workspaceId, { email: 'Ana@Example.com', name: 'Ana', role: 'viewer' })
  const { token } = await servicesOf(h.app).users.createSession(user)
  const um = (await h.req('GET', '/v1/me', token)).json().data
  t.same(um.actor, { kind: 'user', id: user.id, name: 'Ana', email: 'ana@example.com', nodeId: null })
  t.ok(um.permissions.every((p: string) => p.endsWith('.view')))

  // A viewer cannot create keys: 403 with the exact message.
  const denied = await h.req('POST', '/v1/api-keys', token, { name: 'x', permissions: ['screen.view'] })
  t.equal(denied.statusCode, 403)
  t.same(denied.json(), { error: 'forbidden', message: 'Missing permission: api-key.create' })

  // Sessions expire.
  h.clock.advance(721 * 3600_000)
  t.equal((await h.req('GET', '/v1/me', token)).json().error, 'invalid_credentials')
})
