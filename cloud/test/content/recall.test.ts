// Recall and restore (events, conflicts), playability, the device description and the
// change hooks the device link subscribes to.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import type { DomainEvent } from '../../src/domains/events/EventBus.js'
import { makeKey } from '../helpers.js'
import { buildMedia, mp4, PNG_1x1 } from './fixtures.js'

t.test('recall and restore publish content.recalled / content.restored; twice is 409', async (t) => {
  const h = await buildMedia(t)
  const { apiKey, workspaceId } = await h.workspace()
  const seen: DomainEvent[] = []
  const off = servicesOf(h.app).events.subscribe((e) => {
    seen.push(e)
  })
  t.after(off)
  const changes: string[] = []
  servicesOf(h.app).contentChanges.add((ws, kind, id) => {
    changes.push(`${kind}:${id}`)
  })
  const img = await h.ready(apiKey, 'a.png', PNG_1x1)
  const cre = (await h.req('POST', '/v1/creatives', apiKey, { name: 'Sale' })).json().data
  const pl = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Loop', items: [{ kind: 'media', id: img.id }] })).json().data
  const sch = (await h.req('POST', '/v1/schedules', apiKey, { name: 'Week', fallback: { kind: 'playlist', id: pl.id } })).json().data
  const keyId = (await h.req('GET', '/v1/me', apiKey)).json().data.actor.id
  const cases: [string, string, string, string][] = [
    ['media', img.id, 'File', `/v1/media/${img.id}`],
    ['creative', cre.id, 'Design', `/v1/creatives/${cre.id}`],
    ['playlist', pl.id, 'Playlist', `/v1/playlists/${pl.id}`],
    ['schedule', sch.id, 'Schedule', `/v1/schedules/${sch.id}`],
  ]
  for (const [kind, id, label, path] of cases) {
    seen.length = 0
    const r = await h.req('POST', `${path}/recall`, apiKey, { reason: 'Wrong price' })
    t.equal(r.statusCode, 200, `${kind} recall`)
    t.match(r.json().data, { id, recalledAt: h.clock.now().toISOString(), recallReason: 'Wrong price' })
    t.equal(seen.length, 1)
    t.match(seen[0], { event: 'content.recalled', workspaceId, data: { kind, id, name: label, reason: 'Wrong price', recalledBy: `apikey:${keyId}` } })
    t.match((await h.req('GET', path, apiKey)).json().data, { recalledAt: h.clock.now().toISOString(), recallReason: 'Wrong price' })
    const again = await h.req('POST', `${path}/recall`, apiKey, {})
    t.equal(again.statusCode, 409)
    t.equal(again.json().error, 'conflict')
    t.equal((await servicesOf(h.app).contentPlayback.playability(workspaceId, kind as 'media', id)).code, 'recalled')
    t.ok(changes.includes(`${kind}:${id}`), 'change hook called')

    seen.length = 0
    const back = await h.req('POST', `${path}/restore`, apiKey)
    t.equal(back.statusCode, 200, `${kind} restore`)
    t.equal(back.json().data.recalledAt, null)
    t.match(seen, [{ event: 'content.restored', data: { kind, id, name: label } }])
    t.equal((await h.req('POST', `${path}/restore`, apiKey)).statusCode, 409)
  }
  // no reason → null; no body at all is fine
  seen.length = 0
  t.equal((await h.req('POST', `/v1/media/${img.id}/recall`, apiKey)).statusCode, 200)
  t.equal((seen[0]?.data as { reason?: unknown } | undefined)?.reason, null)
  // permission content.recall
  const editor = await makeKey(h, apiKey, ['media.view', 'media.edit'])
  const denied = await h.req('POST', `/v1/media/${img.id}/restore`, editor.secret)
  t.equal(denied.statusCode, 403)
  t.equal(denied.json().message, 'Missing permission: content.recall')
  t.equal((await h.req('POST', '/v1/media/med_nope/recall', apiKey, {})).statusCode, 404)
})

t.test('a JSON null body on recall is refused with 422 in the error envelope and recalls nothing', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const cre = (await h.req('POST', '/v1/creatives', apiKey, { name: 'Sale' })).json().data
  const res = await h.app.inject({
    method: 'POST',
    url: `/v1/creatives/${cre.id}/recall`,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    payload: 'null',
  })
  t.equal(res.statusCode, 422)
  t.match(res.json(), { error: 'validation_error', message: /object/ })
  t.equal((await h.req('GET', `/v1/creatives/${cre.id}`, apiKey)).json().data.recalledAt, null, 'not recalled')
  t.equal((await h.req('POST', `/v1/creatives/${cre.id}/recall`, apiKey)).statusCode, 200, 'no body at all still recalls')
})

t.test('playability and device descriptions', async (t) => {
  const h = await buildMedia(t)
  const { apiKey, workspaceId } = await h.workspace()
  const c = servicesOf(h.app).contentPlayback
  const up = (await h.upload(apiKey, { file: { filename: 'v.mp4', data: mp4(4000) } })).json().data
  t.same(await c.playability(workspaceId, 'media', up.id), { playable: false, code: 'processing', reason: '"v.mp4" is still processing.' })
  await servicesOf(h.app).media.processPending()
  t.same(await c.playability(workspaceId, 'media', up.id), { playable: true })
  const img = await h.ready(apiKey, 'a.png', PNG_1x1)
  const clock = (await h.req('POST', '/v1/app-instances', apiKey, { name: 'Clock', appKey: 'clock' })).json().data
  const empty = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Empty' })).json().data
  t.match(await c.playability(workspaceId, 'playlist', empty.id), { playable: false, code: 'empty' })
  t.match(await c.playability(workspaceId, 'playlist', 'pl_nope'), { playable: false, code: 'not_found' })
  const banner = (await h.req('POST', '/v1/banners', apiKey, { name: 'B', text: 'hi' })).json().data
  t.match(await c.playability(workspaceId, 'banner', banner.id), { playable: false, code: 'not_playable_kind' })
  const pl = (
    await h.req('POST', '/v1/playlists', apiKey, {
      name: 'Lobby',
      items: [
        { kind: 'media', id: up.id },
        { kind: 'media', id: img.id, durationMs: 3000 },
        { kind: 'app', id: clock.id },
      ],
    })
  ).json().data
  t.same(await c.playability(workspaceId, 'playlist', pl.id), { playable: true })

  const d = await c.describeForDevice(workspaceId, 'playlist', pl.id)
  t.match(d, {
    kind: 'playlist',
    id: pl.id,
    name: 'Lobby',
    playable: true,
    items: [
      {
        kind: 'media',
        id: up.id,
        durationMs: 4000,
        content: { mediaKind: 'video', mimeType: 'video/mp4', sha256: up.sha256, contentPath: `/v1/media/${up.id}/content` },
      },
      { kind: 'media', id: img.id, durationMs: 3000, content: { mediaKind: 'image', width: 1, height: 1 } },
      { kind: 'app', id: clock.id, durationMs: 10_000, content: { appKey: 'clock', config: { format: '24h' } } },
    ],
  })
  // a recalled item drops out of the description; with every item recalled the playlist cannot play
  await h.req('POST', `/v1/media/${up.id}/recall`, apiKey, {})
  t.same(
    ((await c.describeForDevice(workspaceId, 'playlist', pl.id))!.items as { id: string }[]).map((i) => i.id),
    [img.id, clock.id],
  )
  const only = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Only video', items: [{ kind: 'media', id: up.id }] })).json().data
  t.match(await c.playability(workspaceId, 'playlist', only.id), { playable: false, code: 'empty' })

  const sch = (
    await h.req('POST', '/v1/schedules', apiKey, {
      name: 'S',
      rules: [{ id: 'r', content: { kind: 'playlist', id: pl.id }, priority: 1, start: '09:00', end: '17:00' }],
      fallback: { kind: 'media', id: img.id },
    })
  ).json().data
  const ds = await c.describeForDevice(workspaceId, 'schedule', sch.id)
  t.match(ds, {
    kind: 'schedule',
    schedule: { rules: [{ id: 'r' }], fallback: { kind: 'media', id: img.id } },
    contents: { [`playlist:${pl.id}`]: { kind: 'playlist' }, [`media:${img.id}`]: { kind: 'media' } },
  })
  const noRules = (await h.req('POST', '/v1/schedules', apiKey, { name: 'Nothing' })).json().data
  t.match(await c.playability(workspaceId, 'schedule', noRules.id), { playable: false, code: 'empty' })
  t.equal(await c.describeForDevice(workspaceId, 'media', 'med_nope'), null)
})

t.test('a recall and its event commit together: the event is in the outbox with the change, and a refused recall records none', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const pl = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Loop' })).json().data
  const rows = () =>
    servicesOf(h.app)
      .db.kysely.selectFrom('events_outbox')
      .select(['event', 'dispatched_at'])
      .where('event', 'in', ['content.recalled', 'content.restored'])
      .orderBy('id')
      .execute()
  t.equal((await h.req('POST', `/v1/playlists/${pl.id}/recall`, apiKey, {})).statusCode, 200)
  const after = await rows()
  t.equal(after.length, 1)
  t.equal(after[0]!.event, 'content.recalled')
  t.ok(after[0]!.dispatched_at, 'dispatched right after the commit')
  t.equal((await h.req('POST', `/v1/playlists/${pl.id}/recall`, apiKey, {})).statusCode, 409)
  t.equal((await rows()).length, 1, 'a refused recall records no event')
  t.equal((await h.req('POST', `/v1/playlists/${pl.id}/restore`, apiKey, {})).statusCode, 200)
  t.same(
    (await rows()).map((r) => r.event),
    ['content.recalled', 'content.restored'],
  )
})
