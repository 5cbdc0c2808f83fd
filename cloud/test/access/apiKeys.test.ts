import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build, makeKey } from '../helpers.js'

// The tests share one app, each in a workspace of its own (the keys it lists, rotates and revokes are that workspace's).
t.test('API keys over HTTP, on one app', async (t) => {
  const shared = await build(t)
  t.test('create shows the secret once; list and get never do', async (t) => {
    const h = shared
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
    const h = shared
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
    const h = shared
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
    const h = shared
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
    const h = shared
    const { apiKey } = await h.workspace()
    const node = async (name: string, parentId: string | null = null, token = apiKey) =>
      (await h.req('POST', '/v1/nodes', token, { name, parentId })).json().data
    const east = await node('East')
    const store = await node('Store 1', east.id)
    const west = await node('West')
    const pinned = await makeKey(h, apiKey, ['node.view', 'node.edit', 'api-key.create', 'api-key.view'], east.id)
    t.equal((await h.req('GET', '/v1/me', pinned.secret)).json().data.actor.nodeId, east.id)

    const seen = (await h.req('GET', '/v1/nodes', pinned.secret))
      .json()
      .data.map((n: { id: string }) => n.id)
      .sort()
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
    t.ok(
      keys.every((k: { nodeId: string }) => k.nodeId === east.id),
      'a pinned key lists only keys inside its subtree',
    )
  })

  t.test('cursor paging: limit turns it on, follow nextCursor until null, count=1 adds total', async (t) => {
    const h = shared
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
    t.same(
      seen,
      all.data.map((k: { id: string }) => k.id),
    )
    for (const bad of ['limit=0', 'limit=501', 'limit=abc', 'cursor=notacursor&limit=2']) {
      const res = await h.req('GET', `/v1/api-keys?${bad}`, apiKey)
      t.equal(res.statusCode, 422, bad)
      t.equal(res.json().error, 'validation_error')
    }
  })

  t.test('revoke needs every permission of the target key and reach of its pin (403 forbidden)', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const owner = (await h.req('GET', '/v1/api-keys', apiKey)).json().data[0]
    const revoker = await makeKey(h, apiKey, ['api-key.revoke', 'api-key.view'])
    const res = await h.req('POST', `/v1/api-keys/${owner.id}/revoke`, revoker.secret)
    t.equal(res.statusCode, 403)
    t.equal(res.json().error, 'forbidden')
    t.equal((await h.req('DELETE', `/v1/api-keys/${owner.id}`, revoker.secret)).statusCode, 403)
    t.equal((await h.req('GET', '/v1/me', apiKey)).statusCode, 200, 'the owner key still works')
    // A key it covers can be revoked.
    const weak = await makeKey(h, apiKey, ['api-key.view'])
    t.equal((await h.req('POST', `/v1/api-keys/${weak.id}/revoke`, revoker.secret)).statusCode, 200)
    // A pinned key does not reach a workspace-wide key, whatever it holds.
    const east = (await h.req('POST', '/v1/nodes', apiKey, { name: 'East' })).json().data
    const pinned = await makeKey(h, apiKey, ['api-key.revoke', 'api-key.view', 'api-key.create'], east.id)
    const root = await makeKey(h, apiKey, ['api-key.view'])
    t.equal((await h.req('POST', `/v1/api-keys/${root.id}/revoke`, pinned.secret)).statusCode, 404)
  })

  t.test('rotate by a low-privilege key cannot take over a stronger key (403 forbidden)', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const owner = (await h.req('GET', '/v1/api-keys', apiKey)).json().data[0]
    const low = await makeKey(h, apiKey, ['api-key.create'])
    const peer = await makeKey(h, apiKey, ['api-key.create', 'screen.view'])
    for (const target of [owner.id, peer.id]) {
      const res = await h.req('POST', `/v1/api-keys/${target}/rotate`, low.secret)
      t.equal(res.statusCode, 403)
      t.equal(res.json().error, 'forbidden')
      t.notOk('secret' in res.json())
    }
    t.equal((await h.req('GET', '/v1/me', apiKey)).statusCode, 200)
  })

  t.test('a child key dies with its parent: revocation cascades, expiry is capped, old children are refused', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const parentRes = await h.req('POST', '/v1/api-keys', apiKey, {
      name: 'parent',
      permissions: ['api-key.create', 'api-key.view', 'node.view'],
      expiresAt: '2026-06-02T12:00:00.000Z',
    })
    const parent = parentRes.json().data
    // No expiry asked, or a later one: the child gets the parent's; an earlier one stays.
    const c1 = (await h.req('POST', '/v1/api-keys', parent.secret, { name: 'c1', permissions: ['node.view', 'api-key.create'] })).json().data
    t.equal(c1.expiresAt, '2026-06-02T12:00:00.000Z')
    const c2 = (await h.req('POST', '/v1/api-keys', parent.secret, { name: 'c2', permissions: ['node.view'], expiresAt: '2027-01-01T00:00:00.000Z' })).json()
      .data
    t.equal(c2.expiresAt, '2026-06-02T12:00:00.000Z')
    const c3 = (await h.req('POST', '/v1/api-keys', parent.secret, { name: 'c3', permissions: ['node.view'], expiresAt: '2026-06-01T13:00:00.000Z' })).json()
      .data
    t.equal(c3.expiresAt, '2026-06-01T13:00:00.000Z')
    const grandchild = (await h.req('POST', '/v1/api-keys', c1.secret, { name: 'gc', permissions: ['node.view'] })).json().data
    t.equal(grandchild.expiresAt, '2026-06-02T12:00:00.000Z')
    t.equal((await h.req('GET', '/v1/nodes', grandchild.secret)).statusCode, 200)

    // Revoking the parent revokes its whole subtree of keys.
    t.equal((await h.req('POST', `/v1/api-keys/${parent.id}/revoke`, apiKey)).statusCode, 200)
    for (const k of [c1, c2, grandchild]) {
      t.equal((await h.req('GET', '/v1/nodes', k.secret)).json().error, 'invalid_credentials', k.name)
      t.ok((await h.req('GET', `/v1/api-keys/${k.id}`, apiKey)).json().data.revokedAt, `${k.name} shows revokedAt`)
    }
    t.equal((await h.req('GET', '/v1/me', apiKey)).statusCode, 200, 'the creator of the parent is untouched')

    // A child whose parent was revoked directly in storage (rows from before the cascade) is refused too.
    const p2 = await makeKey(h, apiKey, ['api-key.create', 'node.view'])
    const orphan = await makeKey(h, p2.secret, ['node.view'])
    await servicesOf(h.app).db.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', ['2026-06-01T12:00:00.000Z', p2.id])
    t.equal((await h.req('GET', '/v1/nodes', orphan.secret)).json().error, 'invalid_credentials')

    // Expiry: a parent past its expiry takes an uncapped legacy child with it.
    const p3 = (
      await h.req('POST', '/v1/api-keys', apiKey, { name: 'p3', permissions: ['api-key.create', 'node.view'], expiresAt: '2026-06-01T14:00:00.000Z' })
    ).json().data
    const c4 = await makeKey(h, p3.secret, ['node.view'])
    await servicesOf(h.app).db.run('UPDATE api_keys SET expires_at = NULL WHERE id = ?', [c4.id])
    t.equal((await h.req('GET', '/v1/nodes', c4.secret)).statusCode, 200)
    h.clock.advance(3 * 3600_000)
    t.equal((await h.req('GET', '/v1/nodes', c4.secret)).json().error, 'invalid_credentials')
  })
})
