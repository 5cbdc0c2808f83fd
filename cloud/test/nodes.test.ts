import t from 'tap'
import { makeKey } from './helpers.js'
import { forEngines } from './db/engines.js'

// Every test here runs on SQLite and, when SVC_TEST_DATABASE_URL is set, on PostgreSQL.
forEngines(t, (t, build) => {
  t.test('location tree: create, get, list, rename, move, delete', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const create = async (body: object) => h.req('POST', '/v1/nodes', apiKey, body)
    const org = (await create({ name: 'Retail', kind: 'org_unit' })).json().data
    t.match(org, { kind: 'org_unit', parentId: null, name: 'Retail', path: [org.id] })
    t.match(org.id, /^node_/)
    const store = (await create({ name: '  Store 12  ', parentId: org.id })).json().data
    t.equal(store.name, 'Store 12')
    t.equal(store.kind, 'location')
    t.same(store.path, [org.id, store.id])
    const group = (await create({ name: 'Window screens', kind: 'screen_group', parentId: store.id })).json().data

    t.same(
      (await h.req('GET', `/v1/nodes?parentId=${org.id}`, apiKey)).json().data.map((n: { id: string }) => n.id),
      [store.id],
    )
    t.same(
      (await h.req('GET', '/v1/nodes?parentId=root', apiKey)).json().data.map((n: { id: string }) => n.id),
      [org.id],
    )
    t.same(
      (await h.req('GET', '/v1/nodes?search=window', apiKey)).json().data.map((n: { id: string }) => n.id),
      [group.id],
    )

    const renamed = await h.req('PATCH', `/v1/nodes/${store.id}`, apiKey, { name: 'Store 12 (Main St)' })
    t.equal(renamed.json().data.name, 'Store 12 (Main St)')
    const other = (await create({ name: 'Outlet', kind: 'org_unit' })).json().data
    const moved = (await h.req('PATCH', `/v1/nodes/${store.id}`, apiKey, { parentId: other.id })).json().data
    t.same(moved.path, [other.id, store.id])
    t.same((await h.req('GET', `/v1/nodes/${group.id}`, apiKey)).json().data.path, [other.id, store.id, group.id])

    const cycle = await h.req('PATCH', `/v1/nodes/${other.id}`, apiKey, { parentId: group.id })
    t.equal(cycle.statusCode, 422)
    t.match(cycle.json().message, /inside itself/)
    const self = await h.req('PATCH', `/v1/nodes/${other.id}`, apiKey, { parentId: other.id })
    t.equal(self.statusCode, 422)
    t.equal((await h.req('PATCH', `/v1/nodes/${other.id}`, apiKey, { name: '' })).statusCode, 422)
    t.equal((await h.req('POST', '/v1/nodes', apiKey, { name: 'x', parentId: 'node_nope' })).json().error, 'invalid_node')

    // Deleting a node with children, or with something living at it, is refused.
    const busy = await h.req('DELETE', `/v1/nodes/${store.id}`, apiKey)
    t.equal(busy.statusCode, 409)
    t.equal(busy.json().error, 'node_not_empty')
    t.match(busy.json().message, /location\(s\) under it/)
    const key = await makeKey(h, apiKey, ['node.view'], group.id)
    const withKey = await h.req('DELETE', `/v1/nodes/${group.id}`, apiKey)
    t.equal(withKey.statusCode, 409)
    t.match(withKey.json().message, /API key/)
    await h.req('POST', `/v1/api-keys/${key.id}/revoke`, apiKey)
    const gone = await h.req('DELETE', `/v1/nodes/${group.id}`, apiKey)
    t.equal(gone.statusCode, 200)
    t.same(gone.json().data, { id: group.id, deleted: true })
    t.equal((await h.req('GET', `/v1/nodes/${group.id}`, apiKey)).statusCode, 404)
    t.equal((await h.req('DELETE', `/v1/nodes/${group.id}`, apiKey)).statusCode, 404)
  })

  t.test('a pinned key cannot delete or move its own node', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const n = (await h.req('POST', '/v1/nodes', apiKey, { name: 'A' })).json().data
    const pinned = await makeKey(h, apiKey, ['node.edit', 'node.view'], n.id)
    t.equal((await h.req('DELETE', `/v1/nodes/${n.id}`, pinned.secret)).statusCode, 403)
    t.equal((await h.req('PATCH', `/v1/nodes/${n.id}`, pinned.secret, { parentId: null })).statusCode, 403)
  })
})
