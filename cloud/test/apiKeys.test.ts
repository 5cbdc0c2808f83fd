import t from 'tap'
import { build, makeKey } from './helpers.js'

t.test('create shows the secret once; list and get never do', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace('Eu', 'eu')
  const res = await h.req('POST', '/v1/api-keys', apiKey, { name: 'Deploy bot', permissions: ['screen.view', 'screen.cast', 'screen.view'] })
  t.equal(res.statusCode, 201)
  const k = res.json().data
  t.match(k.secret, /^ak_eu_live_[A-Za-z0-9]{32}$/)
  t.same(k.permissions, ['screen.cast', 'screen.view'])
  t.equal(k.nodeId, null)
  t.equal(k.expiresAt, null)
  t.equal(k.expired, false)
  t.equal(k.revokedAt, null)
  t.ok(k.secret.startsWith(k.preview))
  const got = (await h.req('GET', `/v1/api-keys/${k.id}`, apiKey)).json().data
  t.notOk('secret' in got)
  t.equal(got.name, 'Deploy bot')
  const listed = (await h.req('GET', '/v1/api-keys', apiKey)).json()
  t.equal(listed.data.length, 2)
  t.equal(listed.data[0].id, k.id, 'newest first')
  t.notOk(JSON.stringify(listed).includes(k.secret))
})

t.test('validation: unknown permission, empty list, bad expiry', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const cases: [unknown, RegExp][] = [
    [{ name: 'x', permissions: ['screen.fly'] }, /unknown permission.*screen\.fly/],
    [{ name: 'x', permissions: [] }, /at least one/],
    [{ name: 'x', permissions: 'some' }, /permissions/],
    [{ name: '   ', permissions: 'all' }, /name/],
    [{ permissions: 'all' }, /name is required/],
    [{ name: 'x', permissions: 'all', expiresAt: 'tomorrow' }, /expiresAt/],
    [{ name: 'x', permissions: 'all', expiresAt: '2020-01-01T00:00:00Z' }, /future/],
  ]
  for (const [body, msg] of cases) {
    const res = await h.req('POST', '/v1/api-keys', apiKey, body)
    t.equal(res.statusCode, 422, JSON.stringify(body))
    t.equal(res.json().error, 'validation_error')
    t.match(res.json().message, msg)
  }
  const badNode = await h.req('POST', '/v1/api-keys', apiKey, { name: 'x', permissions: 'all', nodeId: 'node_nope' })
  t.equal(badNode.statusCode, 422)
  t.equal(badNode.json().error, 'invalid_node')
  t.equal((await h.req('GET', '/v1/api-keys', apiKey)).json().data.length, 1, 'nothing half-created')
})

t.test('a key never receives a permission its creator lacks', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const creator = await makeKey(h, apiKey, ['api-key.create', 'api-key.view', 'screen.view'])
  const ok = await h.req('POST', '/v1/api-keys', creator.secret, { name: 'sub', permissions: ['screen.view'] })
  t.equal(ok.statusCode, 201)
  const more = await h.req('POST', '/v1/api-keys', creator.secret, { name: 'sub', permissions: ['screen.view', 'screen.edit'] })
  t.equal(more.statusCode, 403)
  t.same(more.json(), { error: 'forbidden', message: 'Missing permission: screen.edit' })
  const all = await h.req('POST', '/v1/api-keys', creator.secret, { name: 'sub', permissions: 'all' })
  t.equal(all.statusCode, 403)
  t.equal(all.json().message, 'Missing permission: all')
  // Nor can it rotate a key holding more than it does (that would reveal a stronger secret).
  const strong = await makeKey(h, apiKey, 'all')
  const rot = await h.req('POST', `/v1/api-keys/${strong.id}/rotate`, creator.secret)
  t.equal(rot.statusCode, 403)
})

t.test('rotate: new secret shown once, old one stops at once; revoked keys cannot rotate', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const k = await makeKey(h, apiKey, ['node.view'])
  const res = await h.req('POST', `/v1/api-keys/${k.id}/rotate`, apiKey)
  t.equal(res.statusCode, 200)
  const rotated = res.json().data
  t.equal(rotated.id, k.id)
  t.not(rotated.secret, k.secret)
  t.ok(rotated.secret.startsWith(rotated.preview))
  t.equal((await h.req('GET', '/v1/nodes', k.secret)).json().error, 'invalid_credentials')
  t.equal((await h.req('GET', '/v1/nodes', rotated.secret)).statusCode, 200)
  await h.req('POST', `/v1/api-keys/${k.id}/revoke`, apiKey)
  const again = await h.req('POST', `/v1/api-keys/${k.id}/rotate`, apiKey)
  t.equal(again.statusCode, 409)
  t.equal(again.json().error, 'revoked')
  t.equal((await h.req('GET', '/v1/api-keys/key_missing', apiKey)).statusCode, 404)
})

t.test('pinned keys act only in their subtree', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const node = async (name: string, parentId: string | null = null, token = apiKey) => (await h.req('POST', '/v1/nodes', token, { name, parentId })).json().data
  const east = await node('East')
  const store = await node('Store 1', east.id)
  const west = await node('West')
  const pinned = await makeKey(h, apiKey, ['node.view', 'node.edit', 'api-key.create', 'api-key.view'], east.id)
  t.equal((await h.req('GET', '/v1/me', pinned.secret)).json().data.actor.nodeId, east.id)

  const seen = (await h.req('GET', '/v1/nodes', pinned.secret)).json().data.map((n: { id: string }) => n.id).sort()
  t.same(seen, [east.id, store.id].sort())
  t.equal((await h.req('GET', `/v1/nodes/${west.id}`, pinned.secret)).statusCode, 404)
  t.equal((await h.req('GET', `/v1/nodes/${store.id}`, pinned.secret)).statusCode, 200)

  // Creating with no parent lands under the pinned node; a parent outside is invalid_node.
  const made = await node('Store 2', null, pinned.secret)
  t.equal(made.parentId, east.id)
  const outside = await h.req('POST', '/v1/nodes', pinned.secret, { name: 'x', parentId: west.id })
  t.equal(outside.json().error, 'invalid_node')
  t.equal((await h.req('PATCH', `/v1/nodes/${store.id}`, pinned.secret, { parentId: west.id })).json().error, 'invalid_node')
  t.equal((await h.req('PATCH', `/v1/nodes/${store.id}`, pinned.secret, { parentId: null })).json().error, 'invalid_node')

  // Keys it creates are pinned inside its subtree too.
  const sub = await h.req('POST', '/v1/api-keys', pinned.secret, { name: 'sub', permissions: ['node.view'] })
  t.equal(sub.json().data.nodeId, east.id)
  const subOut = await h.req('POST', '/v1/api-keys', pinned.secret, { name: 'sub', permissions: ['node.view'], nodeId: west.id })
  t.equal(subOut.json().error, 'invalid_node')
  const keys = (await h.req('GET', '/v1/api-keys', pinned.secret)).json().data
  t.ok(keys.every((k: { nodeId: string }) => k.nodeId === east.id), 'a pinned key lists only keys inside its subtree')
})

t.test('cursor paging: limit turns it on, follow nextCursor until null, count=1 adds total', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  for (let i = 0; i < 6; i++) await makeKey(h, apiKey, ['node.view'])
  const all = (await h.req('GET', '/v1/api-keys', apiKey)).json()
  t.equal(all.data.length, 7)
  t.notOk('nextCursor' in all, 'no limit: whole list, no cursor')
  const seen: string[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const url: string = `/v1/api-keys?limit=3&count=1${cursor ? `&cursor=${cursor}` : ''}`
    const page = (await h.req('GET', url, apiKey)).json()
    t.equal(page.total, 7)
    t.ok(page.data.length <= 3)
    seen.push(...page.data.map((k: { id: string }) => k.id))
    cursor = page.nextCursor
    pages++
  } while (cursor)
  t.equal(pages, 3)
  t.same(seen, all.data.map((k: { id: string }) => k.id))
  for (const bad of ['limit=0', 'limit=501', 'limit=abc', 'cursor=notacursor&limit=2']) {
    const res = await h.req('GET', `/v1/api-keys?${bad}`, apiKey)
    t.equal(res.statusCode, 422, bad)
    t.equal(res.json().error, 'validation_error')
  }
})
