// POST /v1/screens/<id>/assign and /v1/screens/bulk-assign through inject, against the
// real content library: every error case, clearing, bulk by ids and by node with skip
// counts, limits, permissions, tenancy, and the usage that blocks deleting assigned content.
import { servicesOf } from '../../src/app.js'
import t, { type Test } from 'tap'
import { makeKey } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { buildMedia, PNG_1x1, type MediaHarness } from '../content/fixtures.js'

async function setup(t: Test) {
  const h = await buildMedia(t)
  const { apiKey, workspaceId } = await h.workspace()
  const node = async (name: string, parentId: string | null = null) => (await h.req('POST', '/v1/nodes', apiKey, { name, parentId })).json().data.id as string
  const north = await node('North')
  const south = await node('South')
  const northShop = await node('North shop', north)
  return { h, apiKey, workspaceId, north, south, northShop }
}

const assign = (h: MediaHarness, key: string, screenId: string, body: unknown) => h.req('POST', `/v1/screens/${screenId}/assign`, key, body)

t.test('assign: stores the assignment, answers the result, clears with null', async (t) => {
  const { h, apiKey } = await setup(t)
  const s = await pairScreen(h, apiKey, 'Lobby')
  const img = await h.ready(apiKey, 'a.png', PNG_1x1)
  const pl = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Loop', items: [{ kind: 'media', id: img.id }] })).json().data
  const before = (await h.req('GET', `/v1/screens/${s.screenId}`, apiKey)).json().data.desiredVersion

  const res = await assign(h, apiKey, s.screenId, { contentKind: 'playlist', contentId: pl.id })
  t.equal(res.statusCode, 200, res.body)
  t.same(res.json().data, {
    screenId: s.screenId,
    contentKind: 'playlist',
    contentId: pl.id,
    previous: null,
    desiredVersion: before + 1,
    assignedAt: h.clock.now().toISOString(),
  })
  t.match((await h.req('GET', `/v1/screens/${s.screenId}`, apiKey)).json().data, { contentKind: 'playlist', contentId: pl.id, desiredVersion: before + 1 })
  t.match((await h.req('GET', '/v1/screens', apiKey)).json().data, [{ id: s.screenId, contentKind: 'playlist', contentId: pl.id }])
  const state = await servicesOf(h.app).desiredState.build((await h.req('GET', '/v1/me', apiKey)).json().data.workspace.id, s.screenId)
  t.match(state!.assignment, {
    contentKind: 'playlist',
    contentId: pl.id,
    content: {
      name: 'Loop',
      items: [{ contentKind: 'media', contentId: img.id, url: new RegExp(`^/v1/media/${img.id}/content\\?exp=\\d+&sig=[0-9a-f]{64}$`) }],
    },
  })

  const media = await assign(h, apiKey, s.screenId, { contentKind: 'media', contentId: img.id })
  t.match(media.json().data, { contentKind: 'media', contentId: img.id, previous: { contentKind: 'playlist', contentId: pl.id }, desiredVersion: before + 2 })

  const cleared = await assign(h, apiKey, s.screenId, { contentKind: null, contentId: null })
  t.equal(cleared.statusCode, 200)
  t.match(cleared.json().data, { contentKind: null, contentId: null, previous: { contentKind: 'media', contentId: img.id } })
  t.match((await h.req('GET', `/v1/screens/${s.screenId}`, apiKey)).json().data, { contentKind: null, contentId: null })
  t.equal((await assign(h, apiKey, s.screenId, { contentKind: null })).statusCode, 200, 'contentKind null alone also clears')
})

t.test('assign: validation, unknown content, not_shared, content_unplayable, 404', async (t) => {
  const { h, apiKey, north, south, northShop } = await setup(t)
  const s = await pairScreen(h, apiKey, 'North screen', northShop)
  const cases: [unknown, string][] = [
    [{}, 'contentKind is required'],
    [{ contentKind: 'media' }, 'contentId is required'],
    [{ contentId: 'med_x' }, 'contentKind is required with contentId'],
    [{ contentKind: null, contentId: 'med_x' }, 'contentKind is required with contentId'],
    [{ contentKind: 'media', contentId: 'med_nope' }, 'contentId: unknown content (media "med_nope")'],
    [{ contentKind: 'playlist', contentId: 'pl_nope' }, 'unknown content'],
  ]
  for (const [body, msg] of cases) {
    const r = await assign(h, apiKey, s.screenId, body)
    t.equal(r.statusCode, 422, JSON.stringify(body))
    t.equal(r.json().error, 'validation_error')
    t.match(r.json().message, msg)
  }
  const badKind = await assign(h, apiKey, s.screenId, { contentKind: 'banner', contentId: 'ban_x' })
  t.equal(badKind.statusCode, 422, 'a kind outside the enum')
  t.match(badKind.json().message, /contentKind/)

  // content homed in another branch of the tree is not shared to the screen's location
  const southImg = await h.ready(apiKey, 's.png', PNG_1x1, { nodeId: south })
  const ns = await assign(h, apiKey, s.screenId, { contentKind: 'media', contentId: southImg.id })
  t.equal(ns.statusCode, 403)
  t.equal(ns.json().error, 'not_shared')
  // shared to an ancestor of the screen's node: fine
  t.equal((await h.req('POST', `/v1/media/${southImg.id}/shares`, apiKey, { nodeId: north })).statusCode, 200)
  t.equal((await assign(h, apiKey, s.screenId, { contentKind: 'media', contentId: southImg.id })).statusCode, 200)

  // still processing (testConfig mediaProcessing: manual)
  const up = (await h.upload(apiKey, { name: 'p.png', file: { filename: 'p.png', data: PNG_1x1 } })).json().data
  const proc = await assign(h, apiKey, s.screenId, { contentKind: 'media', contentId: up.id })
  t.equal(proc.statusCode, 422)
  t.equal(proc.json().error, 'content_unplayable')
  t.match(proc.json().message, 'still processing')
  // recalled
  const img = await h.ready(apiKey, 'r.png', PNG_1x1)
  await h.req('POST', `/v1/media/${img.id}/recall`, apiKey, { reason: 'wrong' })
  const rec = await assign(h, apiKey, s.screenId, { contentKind: 'media', contentId: img.id })
  t.equal(rec.statusCode, 422)
  t.equal(rec.json().error, 'content_unplayable')
  t.match(rec.json().message, 'is recalled')
  // an empty playlist cannot play
  const empty = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Empty' })).json().data
  t.match((await assign(h, apiKey, s.screenId, { contentKind: 'playlist', contentId: empty.id })).json(), { error: 'content_unplayable', message: /empty/ })

  const nf = await assign(h, apiKey, 'scr_nope', { contentKind: null })
  t.equal(nf.statusCode, 404)
  t.equal(nf.json().error, 'not_found')
})

t.test('assign: permissions, pinned keys, tenancy', async (t) => {
  const { h, apiKey, north, south, northShop } = await setup(t)
  const inNorth = await pairScreen(h, apiKey, 'N', northShop)
  const inSouth = await pairScreen(h, apiKey, 'S', south)
  const img = await h.ready(apiKey, 'a.png', PNG_1x1)

  const viewer = await makeKey(h, apiKey, ['screen.view'])
  const denied = await assign(h, viewer.secret, inNorth.screenId, { contentKind: 'media', contentId: img.id })
  t.equal(denied.statusCode, 403)
  t.equal(denied.json().message, 'Missing permission: screen.edit')
  t.equal((await h.req('POST', '/v1/screens/bulk-assign', viewer.secret, { screenIds: [inNorth.screenId], contentKind: null })).statusCode, 403)

  const pinned = await makeKey(h, apiKey, ['screen.edit', 'screen.view'], north)
  t.equal((await assign(h, pinned.secret, inNorth.screenId, { contentKind: 'media', contentId: img.id })).statusCode, 200, 'root content plays everywhere')
  const out = await assign(h, pinned.secret, inSouth.screenId, { contentKind: 'media', contentId: img.id })
  t.equal(out.statusCode, 404, "a screen outside the key's subtree does not exist for it")
  t.equal(out.json().error, 'not_found')
  // content homed in the south branch: a north-pinned key gets not_shared, not its details
  const southImg = await h.ready(apiKey, 's.png', PNG_1x1, { nodeId: south })
  t.equal((await assign(h, pinned.secret, inNorth.screenId, { contentKind: 'media', contentId: southImg.id })).json().error, 'not_shared')

  const other = await h.workspace('Other')
  const foreign = await assign(h, other.apiKey, inNorth.screenId, { contentKind: null })
  t.equal(foreign.statusCode, 404)
  t.equal(foreign.json().error, 'not_found')
  const foreignContent = await assign(h, apiKey, inNorth.screenId, { contentKind: 'media', contentId: (await h.ready(other.apiKey, 'o.png', PNG_1x1)).id })
  t.equal(foreignContent.statusCode, 422, "another workspace's content is unknown here")
  t.equal(foreignContent.json().error, 'validation_error')
  t.match((await h.req('GET', `/v1/screens/${inNorth.screenId}`, apiKey)).json().data, { contentKind: 'media', contentId: img.id }, 'unchanged')
})

t.test('bulk-assign by ids and by node: skip counts, one publish, limits, clearing', async (t) => {
  const { h, apiKey, workspaceId, north, south, northShop } = await setup(t)
  const n1 = await pairScreen(h, apiKey, 'N1', north)
  const n2 = await pairScreen(h, apiKey, 'N2', northShop)
  const s1 = await pairScreen(h, apiKey, 'S1', south)
  const root = await pairScreen(h, apiKey, 'Root')
  const northImg = await h.ready(apiKey, 'n.png', PNG_1x1, { nodeId: north })
  const published: string[] = []
  servicesOf(h.app).desiredPublisher.onPublished((id) => published.push(id))
  let batches = 0
  const orig = servicesOf(h.app).desiredPublisher.markDirty.bind(servicesOf(h.app).desiredPublisher)
  servicesOf(h.app).desiredPublisher.markDirty = (ws, ids) => (batches++, orig(ws, ids))
  t.teardown(() => void (servicesOf(h.app).desiredPublisher.markDirty = orig))

  const byIds = await h.req('POST', '/v1/screens/bulk-assign', apiKey, {
    screenIds: [n1.screenId, n2.screenId, s1.screenId, root.screenId, 'scr_nope', n1.screenId],
    contentKind: 'media',
    contentId: northImg.id,
  })
  t.equal(byIds.statusCode, 200, byIds.body)
  t.same(byIds.json().data, {
    contentKind: 'media',
    contentId: northImg.id,
    assigned: 2,
    skipped: { not_found: 1, not_shared: 2 },
    screenIds: [n1.screenId, n2.screenId].sort(),
    skippedScreens: [
      { screenId: 'scr_nope', reason: 'not_found' },
      ...[s1.screenId, root.screenId].sort().map((screenId) => ({ screenId, reason: 'not_shared' })),
    ],
    assignedAt: h.clock.now().toISOString(),
  })
  t.equal(batches, 1, 'one markDirty for the whole request')
  t.same(published.sort(), [n1.screenId, n2.screenId].sort(), 'only the assigned screens were republished')
  t.equal((await h.req('GET', `/v1/screens/${s1.screenId}`, apiKey)).json().data.contentKind, null, 'a skipped screen is unchanged')

  // by node: every screen at or under it
  const img = await h.ready(apiKey, 'all.png', PNG_1x1)
  const byNode = await h.req('POST', '/v1/screens/bulk-assign', apiKey, { nodeId: north, contentKind: 'media', contentId: img.id })
  t.match(byNode.json().data, { assigned: 2, skipped: { not_found: 0, not_shared: 0 }, screenIds: [n1.screenId, n2.screenId].sort() })
  const everything = await h.req('POST', '/v1/screens/bulk-assign', apiKey, { nodeId: null, contentKind: 'media', contentId: img.id })
  t.equal(everything.json().data.assigned, 4, 'nodeId null = every screen the key reaches')

  // a pinned key reaches only its subtree; others count as not_found
  const pinned = await makeKey(h, apiKey, ['screen.edit'], north)
  const p = await h.req('POST', '/v1/screens/bulk-assign', pinned.secret, { screenIds: [n1.screenId, s1.screenId], contentKind: null, contentId: null })
  t.match(p.json().data, { contentKind: null, assigned: 1, skipped: { not_found: 1, not_shared: 0 }, screenIds: [n1.screenId] })
  t.equal((await h.req('GET', `/v1/screens/${n1.screenId}`, apiKey)).json().data.contentKind, null, 'cleared')
  t.equal((await h.req('POST', '/v1/screens/bulk-assign', pinned.secret, { nodeId: south, contentKind: null })).json().error, 'invalid_node')

  // errors for the whole request
  const bad: [unknown, string, string][] = [
    [{ contentKind: null }, 'validation_error', 'one of screenIds, nodeId or groupId'],
    [{ screenIds: [n1.screenId], nodeId: north, contentKind: null }, 'validation_error', 'one of screenIds, nodeId or groupId'],
    [{ screenIds: [], contentKind: null }, 'validation_error', 'at least one'],
    [{ screenIds: [n1.screenId], contentKind: 'media', contentId: 'med_nope' }, 'validation_error', 'unknown content'],
    [{ screenIds: Array.from({ length: 1001 }, (_, i) => `scr_${i}`), contentKind: null }, 'validation_error', 'screenIds'],
    [{ nodeId: 'node_nope', contentKind: null }, 'invalid_node', 'not a location'],
  ]
  for (const [body, code, msg] of bad) {
    const r = await h.req('POST', '/v1/screens/bulk-assign', apiKey, body)
    t.equal(r.json().error, code, JSON.stringify(body).slice(0, 80))
    t.match(r.json().message ?? '', msg)
  }
  const up = (await h.upload(apiKey, { name: 'p.png', file: { filename: 'p.png', data: PNG_1x1 } })).json().data
  t.equal(
    (await h.req('POST', '/v1/screens/bulk-assign', apiKey, { screenIds: [n1.screenId], contentKind: 'media', contentId: up.id })).json().error,
    'content_unplayable',
  )

  // more than 1000 screens under a node: 422
  const now = h.clock.now().toISOString()
  await servicesOf(h.app).db.transaction(async (tx) => {
    for (let i = 0; i < 1000; i++) {
      await tx.run('INSERT INTO screens (id, workspace_id, node_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [
        `scr_bulk${String(i).padStart(4, '0')}`,
        workspaceId,
        south,
        `B${i}`,
        now,
        now,
      ])
    }
  })
  const tooMany = await h.req('POST', '/v1/screens/bulk-assign', apiKey, { nodeId: south, contentKind: null })
  t.equal(tooMany.statusCode, 422)
  t.match(tooMany.json(), { error: 'validation_error', message: /1001 screens; at most 1000/ })
  const thousand = await h.req('POST', '/v1/screens/bulk-assign', apiKey, {
    screenIds: Array.from({ length: 1000 }, (_, i) => `scr_bulk${String(i).padStart(4, '0')}`),
    contentKind: 'media',
    contentId: img.id,
  })
  t.match(thousand.json().data, { assigned: 1000, skipped: { not_found: 0, not_shared: 0 } }, '1000 in one request')
  t.equal((await servicesOf(h.app).db.get<{ n: number }>('SELECT COUNT(*) AS n FROM screens WHERE content_id = ?', [img.id]))!.n, 1003)
})

t.test('assigned content cannot be deleted; cleared, it can', async (t) => {
  const { h, apiKey } = await setup(t)
  const s = await pairScreen(h, apiKey, 'Lobby')
  const img = await h.ready(apiKey, 'a.png', PNG_1x1)
  const pl = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Loop', items: [{ kind: 'media', id: img.id }] })).json().data
  await assign(h, apiKey, s.screenId, { contentKind: 'playlist', contentId: pl.id })
  const del = await h.req('DELETE', `/v1/playlists/${pl.id}`, apiKey)
  t.equal(del.statusCode, 409)
  t.equal(del.json().error, 'conflict')
  t.match(del.json().message, '1 screen(s) assigned to it')

  const img2 = await h.ready(apiKey, 'b.png', PNG_1x1)
  await assign(h, apiKey, s.screenId, { contentKind: 'media', contentId: img2.id })
  t.match((await h.req('DELETE', `/v1/media/${img2.id}`, apiKey)).json(), { error: 'conflict', message: /screen\(s\) assigned/ })
  t.equal((await h.req('DELETE', `/v1/playlists/${pl.id}`, apiKey)).statusCode, 200, 'no longer assigned')

  // an active cast holds its content too
  const cast = (await h.req('POST', '/v1/casts', apiKey, { contentKind: 'media', contentId: img.id })).json().data
  t.match((await h.req('DELETE', `/v1/media/${img.id}`, apiKey)).json(), { error: 'conflict', message: /active cast/ })
  await h.req('POST', `/v1/casts/${cast.id}/clear`, apiKey)
  t.equal((await h.req('DELETE', `/v1/media/${img.id}`, apiKey)).statusCode, 200)
  await assign(h, apiKey, s.screenId, { contentKind: null })
  t.equal((await h.req('DELETE', `/v1/media/${img2.id}`, apiKey)).statusCode, 200)
})

t.test('content changes republish every screen that shows it', async (t) => {
  const { h, apiKey, workspaceId } = await setup(t)
  const direct = await pairScreen(h, apiKey, 'Direct')
  const viaPlaylist = await pairScreen(h, apiKey, 'Playlist')
  const viaSchedule = await pairScreen(h, apiKey, 'Schedule')
  const viaCast = await pairScreen(h, apiKey, 'Cast')
  const unrelated = await pairScreen(h, apiKey, 'Other')
  const img = await h.ready(apiKey, 'a.png', PNG_1x1)
  const other = await h.ready(apiKey, 'b.png', PNG_1x1)
  const pl = (
    await h.req('POST', '/v1/playlists', apiKey, {
      name: 'Loop',
      items: [
        { kind: 'media', id: img.id },
        { kind: 'media', id: other.id },
      ],
    })
  ).json().data
  const sch = (await h.req('POST', '/v1/schedules', apiKey, { name: 'Week', fallback: { kind: 'playlist', id: pl.id } })).json().data
  await assign(h, apiKey, direct.screenId, { contentKind: 'media', contentId: img.id })
  await assign(h, apiKey, viaPlaylist.screenId, { contentKind: 'playlist', contentId: pl.id })
  await assign(h, apiKey, viaSchedule.screenId, { contentKind: 'schedule', contentId: sch.id })
  await assign(h, apiKey, unrelated.screenId, { contentKind: 'media', contentId: other.id })
  await h.req('POST', '/v1/casts', apiKey, { contentKind: 'media', contentId: img.id, scopeKind: 'screens', screenIds: [viaCast.screenId] })
  t.same(
    await servicesOf(h.app).assignments.screensShowing(workspaceId, img.id),
    [direct.screenId, viaPlaylist.screenId, viaSchedule.screenId].sort(),
    'assigned it, directly or through what contains it',
  )
  t.same(await servicesOf(h.app).takeoverRecords.screensShowing(workspaceId, [img.id]), [viaCast.screenId], 'held by a cast showing it')

  await servicesOf(h.app).desiredPublisher.idle()
  const published: string[] = []
  servicesOf(h.app).desiredPublisher.onPublished((id) => published.push(id))
  t.equal((await h.req('POST', `/v1/media/${img.id}/recall`, apiKey, {})).statusCode, 200)
  await servicesOf(h.app).desiredPublisher.idle()
  t.same(published.sort(), [direct.screenId, viaPlaylist.screenId, viaSchedule.screenId, viaCast.screenId].sort(), 'every screen showing it, none other')

  const build = (id: string) => servicesOf(h.app).desiredState.build(workspaceId, id)
  t.equal((await build(direct.screenId))!.assignment, null, 'a recalled direct assignment plays nothing')
  t.same(
    (await build(viaPlaylist.screenId))!.assignment!.content!.items!.map((i) => i.contentId),
    [other.id],
    'the playlist drops it',
  )
  t.same((await build(viaCast.screenId))!.casts, [], 'the cast of it is left out')
  const schState = (await build(viaSchedule.screenId))!
  t.notOk(JSON.stringify(schState).includes(img.id), 'the schedule library no longer names it')

  published.length = 0
  await h.req('POST', `/v1/media/${img.id}/restore`, apiKey)
  await servicesOf(h.app).desiredPublisher.idle()
  t.equal(published.length, 4, 'restore republishes them')
  t.match((await build(direct.screenId))!.assignment, { contentKind: 'media', contentId: img.id, content: { url: /sig=/ } })

  // a file that finishes processing reaches the screens already waiting for it (via a playlist)
  const up = (await h.upload(apiKey, { name: 'late.png', file: { filename: 'late.png', data: PNG_1x1 } })).json().data
  await h.req('PATCH', `/v1/playlists/${pl.id}`, apiKey, {
    items: [
      { kind: 'media', id: other.id },
      { kind: 'media', id: up.id },
    ],
  })
  await servicesOf(h.app).desiredPublisher.idle()
  t.same(
    (await build(viaPlaylist.screenId))!.assignment!.content!.items!.map((i) => i.contentId),
    [other.id],
    'not yet',
  )
  published.length = 0
  await servicesOf(h.app).media.processPending()
  await servicesOf(h.app).desiredPublisher.idle()
  t.ok(published.includes(viaPlaylist.screenId), 'republished when processing finished')
  t.same(
    (await build(viaPlaylist.screenId))!.assignment!.content!.items!.map((i) => i.contentId),
    [other.id, up.id],
  )
})

t.test('unsharing content (or moving the screen away) takes it off the screen', async (t) => {
  const { h, apiKey, workspaceId, north, south } = await setup(t)
  const s = await pairScreen(h, apiKey, 'N', north)
  const img = await h.ready(apiKey, 's.png', PNG_1x1, { nodeId: south })
  await h.req('POST', `/v1/media/${img.id}/shares`, apiKey, { nodeId: north })
  t.equal((await assign(h, apiKey, s.screenId, { contentKind: 'media', contentId: img.id })).statusCode, 200)
  const build = () => servicesOf(h.app).desiredState.build(workspaceId, s.screenId)
  t.match((await build())!.assignment, { contentId: img.id })
  const published: string[] = []
  servicesOf(h.app).desiredPublisher.onPublished((id) => published.push(id))
  t.equal((await h.req('DELETE', `/v1/media/${img.id}/shares/${north}`, apiKey)).statusCode, 200)
  await servicesOf(h.app).desiredPublisher.idle()
  t.same(published, [s.screenId], 'republished on unshare')
  t.equal((await build())!.assignment, null, 'no longer shared to its location: left out')
  t.equal((await h.req('PATCH', `/v1/screens/${s.screenId}`, apiKey, { nodeId: south })).statusCode, 200)
  t.match((await build())!.assignment, { contentId: img.id }, "moved into the content's home: back")
})
