// Locations and sharing: pinned keys see and create only inside their subtree, explicit
// shares, isAvailableAt for the assignment code, and nodes holding content stay.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { makeKey } from '../helpers.js'
import { buildMedia, PNG_1x1 } from './fixtures.js'

t.test('pinned key: creates at its node, sees only its subtree, outside is 404', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const north = (await h.req('POST', '/v1/nodes', apiKey, { name: 'North' })).json().data
  const store = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store 1', parentId: north.id })).json().data
  const south = (await h.req('POST', '/v1/nodes', apiKey, { name: 'South' })).json().data
  const pinned = (await makeKey(h, apiKey, 'all', north.id)).secret

  const rootPl = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Root playlist' })).json().data
  const southPl = (await h.req('POST', '/v1/playlists', apiKey, { name: 'South playlist', nodeId: south.id })).json().data
  const mine = (await h.req('POST', '/v1/playlists', pinned, { name: 'Mine' })).json().data
  t.equal(mine.nodeId, north.id, 'a pinned key creates at its own node by default')
  const deeper = (await h.req('POST', '/v1/playlists', pinned, { name: 'Store', nodeId: store.id })).json().data
  t.equal(deeper.nodeId, store.id)
  t.equal((await h.req('POST', '/v1/playlists', pinned, { name: 'x', nodeId: south.id })).json().error, 'invalid_node')

  t.same(
    (await h.req('GET', '/v1/playlists', pinned))
      .json()
      .data.map((p: { id: string }) => p.id)
      .sort(),
    [mine.id, deeper.id].sort(),
  )
  for (const id of [rootPl.id, southPl.id]) {
    t.equal((await h.req('GET', `/v1/playlists/${id}`, pinned)).statusCode, 404)
    t.equal((await h.req('PATCH', `/v1/playlists/${id}`, pinned, { name: 'x' })).statusCode, 404)
    t.equal((await h.req('DELETE', `/v1/playlists/${id}`, pinned)).statusCode, 404)
    t.equal((await h.req('POST', `/v1/playlists/${id}/recall`, pinned, {})).statusCode, 404)
  }
  // media the same way
  const rootImg = await h.ready(apiKey, 'root.png', PNG_1x1)
  const northImg = await h.ready(pinned, 'north.png', PNG_1x1)
  t.equal(northImg.nodeId, north.id)
  t.same(
    (await h.req('GET', '/v1/media', pinned)).json().data.map((m: { id: string }) => m.id),
    [northImg.id],
  )
  t.equal((await h.req('GET', `/v1/media/${rootImg.id}/content`, pinned)).statusCode, 404)
  // a playlist of a pinned key cannot name content it cannot see
  t.equal((await h.req('PATCH', `/v1/playlists/${mine.id}`, pinned, { items: [{ kind: 'media', id: rootImg.id }] })).statusCode, 422)
  t.equal((await h.req('PATCH', `/v1/playlists/${mine.id}`, pinned, { items: [{ kind: 'media', id: northImg.id }] })).statusCode, 200)
  // the pinned key cannot move its item out of its subtree
  t.equal((await h.req('PATCH', `/v1/playlists/${mine.id}`, pinned, { nodeId: south.id })).json().error, 'invalid_node')
})

t.test('sharing: shares list, add, remove; shared-in items are visible and usable, not editable; isAvailableAt', async (t) => {
  const h = await buildMedia(t)
  const { apiKey, workspaceId } = await h.workspace()
  const north = (await h.req('POST', '/v1/nodes', apiKey, { name: 'North' })).json().data
  const store = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store 1', parentId: north.id })).json().data
  const south = (await h.req('POST', '/v1/nodes', apiKey, { name: 'South' })).json().data
  const northKey = (await makeKey(h, apiKey, 'all', north.id)).secret
  const content = servicesOf(h.app).contentAccess

  const img = await h.ready(apiKey, 'brand.png', PNG_1x1, { nodeId: south.id })
  t.equal(await content.isAvailableAt(workspaceId, 'media', img.id, south.id), true, 'home node')
  t.equal(await content.isAvailableAt(workspaceId, 'media', img.id, store.id), false, 'not shared yet')
  t.equal(await content.isAvailableAt(workspaceId, 'media', img.id, null), false, 'a root screen is outside a South item')
  t.equal((await h.req('GET', `/v1/media/${img.id}`, northKey)).statusCode, 404)

  const shared = await h.req('POST', `/v1/media/${img.id}/shares`, apiKey, { nodeId: north.id })
  t.equal(shared.statusCode, 200)
  t.same(
    shared.json().data.map((s: { nodeId: string }) => s.nodeId),
    [north.id],
  )
  t.same((await h.req('POST', `/v1/media/${img.id}/shares`, apiKey, { nodeId: north.id })).json().data.length, 1, 'sharing twice is harmless')
  t.same(
    (await h.req('GET', `/v1/media/${img.id}/shares`, apiKey)).json().data.map((s: { nodeId: string }) => s.nodeId),
    [north.id],
  )
  t.same((await h.req('GET', `/v1/media/${img.id}`, apiKey)).json().data.sharedWith, [north.id])
  t.equal(await content.isAvailableAt(workspaceId, 'media', img.id, store.id), true, 'a screen below the shared node')
  t.equal(await content.isAvailableAt(workspaceId, 'media', img.id, north.id), true)
  t.equal(await content.isAvailableAt(workspaceId, 'media', 'med_nope', north.id), false)
  t.equal(await content.isAvailableAt(workspaceId, 'media', img.id, 'node_other_ws'), false)

  // the North key sees the shared file and may use it, but not change it
  t.equal((await h.req('GET', `/v1/media/${img.id}`, northKey)).statusCode, 200)
  t.same(
    (await h.req('GET', '/v1/media', northKey)).json().data.map((m: { id: string }) => m.id),
    [img.id],
  )
  t.equal((await h.req('POST', '/v1/playlists', northKey, { name: 'Uses shared', items: [{ kind: 'media', id: img.id }] })).statusCode, 201)
  t.equal((await h.req('PATCH', `/v1/media/${img.id}`, northKey, { name: 'mine now' })).statusCode, 403)
  t.equal((await h.req('POST', `/v1/media/${img.id}/shares`, northKey, { nodeId: store.id })).statusCode, 403)

  t.equal((await h.req('POST', `/v1/media/${img.id}/shares`, apiKey, { nodeId: 'node_nope' })).json().error, 'invalid_node')
  t.equal((await h.req('POST', `/v1/media/${img.id}/shares`, apiKey, {})).statusCode, 422)

  // a node something is shared to, or that is home to content, cannot be deleted
  const busy = await h.req('DELETE', `/v1/nodes/${north.id}`, apiKey)
  t.equal(busy.statusCode, 409)
  t.equal((await h.req('DELETE', `/v1/nodes/${south.id}`, apiKey)).json().error, 'node_not_empty')

  t.same((await h.req('DELETE', `/v1/media/${img.id}/shares/${north.id}`, apiKey)).json().data, { nodeId: north.id, deleted: true })
  t.equal((await h.req('DELETE', `/v1/media/${img.id}/shares/${north.id}`, apiKey)).statusCode, 404)
  t.equal(await content.isAvailableAt(workspaceId, 'media', img.id, store.id), false)

  // generic kinds share the same way
  const pl = (await h.req('POST', '/v1/playlists', apiKey, { name: 'South loop', nodeId: south.id })).json().data
  t.equal((await h.req('POST', `/v1/playlists/${pl.id}/shares`, apiKey, { nodeId: store.id })).statusCode, 200)
  t.equal(await content.isAvailableAt(workspaceId, 'playlist', pl.id, store.id), true)
  t.equal(await content.isAvailableAt(workspaceId, 'playlist', pl.id, north.id), false, 'sharing to Store 1 does not cover its parent')
  const rootPl = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Everywhere' })).json().data
  t.equal(await content.isAvailableAt(workspaceId, 'playlist', rootPl.id, store.id), true, 'root content plays everywhere')
})
