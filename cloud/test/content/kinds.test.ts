// The generic content kinds, driven through HTTP: create/list/get/update/delete for each,
// paging per SPEC, idempotent creates, and each kind's own validation.
import t from 'tap'
import { buildMedia, PNG_1x1 } from './fixtures.js'

const SAMPLES: Record<string, Record<string, unknown>> = {
  'media-folders': {},
  playlists: {},
  schedules: {},
  creatives: { width: 1080, height: 1920, design: { elements: [] } },
  layouts: { zones: [{ id: 'main', x: 0, y: 0, width: 1920, height: 1080 }] },
  banners: { text: 'Closing at 6 pm today' },
  'signage-templates': { category: 'menu', definition: { slots: 3 } },
  'app-instances': { appKey: 'clock' },
  'celebration-entries': { person: 'Ada', date: '2026-12-10' },
}
const PREFIX: Record<string, string> = {
  'media-folders': 'fld_',
  playlists: 'pl_',
  schedules: 'sch_',
  creatives: 'cre_',
  layouts: 'lay_',
  banners: 'ban_',
  'signage-templates': 'sgt_',
  'app-instances': 'app_',
  'celebration-entries': 'cel_',
}
const PAGED = ['media-folders', 'creatives', 'layouts', 'banners', 'signage-templates', 'app-instances', 'celebration-entries']

t.test('every kind: create, get, list, rename, delete', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  for (const [path, sample] of Object.entries(SAMPLES)) {
    const created = await h.req('POST', `/v1/${path}`, apiKey, { name: `  A ${path}  `, ...sample })
    t.equal(created.statusCode, 201, `${path} create`)
    const item = created.json().data
    t.ok(item.id.startsWith(PREFIX[path]!), `${path} id prefix`)
    t.match(item, { name: `A ${path}`, nodeId: null, sharedWith: [], createdAt: h.clock.now().toISOString(), updatedAt: h.clock.now().toISOString() })
    t.same((await h.req('GET', `/v1/${path}/${item.id}`, apiKey)).json().data, item, `${path} get`)
    t.same(
      (await h.req('GET', `/v1/${path}`, apiKey)).json().data.map((x: { id: string }) => x.id),
      [item.id],
      `${path} list`,
    )
    h.clock.advance(1000)
    const renamed = (await h.req('PATCH', `/v1/${path}/${item.id}`, apiKey, { name: 'Renamed' })).json().data
    t.equal(renamed.name, 'Renamed')
    t.equal(renamed.updatedAt, h.clock.now().toISOString())
    t.equal(renamed.createdAt, item.createdAt)
    t.equal((await h.req('POST', `/v1/${path}`, apiKey, { ...sample })).statusCode, 422, `${path} name required`)
    t.equal((await h.req('POST', `/v1/${path}`, apiKey, { name: '   ', ...sample })).statusCode, 422, `${path} blank name`)
    t.equal((await h.req('POST', `/v1/${path}`, apiKey, { name: 'x', nodeId: 'node_nope', ...sample })).json().error, 'invalid_node')
    t.same((await h.req('DELETE', `/v1/${path}/${item.id}`, apiKey)).json().data, { id: item.id, deleted: true })
    t.equal((await h.req('GET', `/v1/${path}/${item.id}`, apiKey)).statusCode, 404)
    t.equal((await h.req('PATCH', `/v1/${path}/${item.id}`, apiKey, { name: 'x' })).statusCode, 404)
    t.equal((await h.req('DELETE', `/v1/${path}/${item.id}`, apiKey)).statusCode, 404)
  }
})

t.test('paged kinds: newest first, limit 1–500, cursor, search, count; playlists and schedules are full lists', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  for (const path of [...PAGED, 'playlists', 'schedules']) {
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      h.clock.advance(10)
      ids.push((await h.req('POST', `/v1/${path}`, apiKey, { name: i % 2 ? `Odd ${i}` : `Even ${i}`, ...SAMPLES[path] })).json().data.id)
    }
    const newest = [...ids].reverse()
    const all = (await h.req('GET', `/v1/${path}?count=1`, apiKey)).json()
    t.same(
      all.data.map((x: { id: string }) => x.id),
      newest,
      `${path}: whole list newest first`,
    )
    t.equal(all.total, 5)
    t.equal(all.nextCursor, undefined)
    t.same(
      (await h.req('GET', `/v1/${path}?search=odd`, apiKey)).json().data.map((x: { id: string }) => x.id),
      [ids[3], ids[1]],
      `${path}: search`,
    )
    if (PAGED.includes(path)) {
      const p1 = (await h.req('GET', `/v1/${path}?limit=2&count=1`, apiKey)).json()
      t.same(
        p1.data.map((x: { id: string }) => x.id),
        newest.slice(0, 2),
      )
      t.equal(p1.total, 5)
      const p2 = (await h.req('GET', `/v1/${path}?limit=2&cursor=${p1.nextCursor}`, apiKey)).json()
      t.same(
        p2.data.map((x: { id: string }) => x.id),
        newest.slice(2, 4),
      )
      const p3 = (await h.req('GET', `/v1/${path}?limit=2&cursor=${p2.nextCursor}`, apiKey)).json()
      t.same(
        p3.data.map((x: { id: string }) => x.id),
        newest.slice(4),
      )
      t.equal(p3.nextCursor, null)
      t.equal((await h.req('GET', `/v1/${path}?limit=501`, apiKey)).statusCode, 422, `${path}: max 500`)
      t.equal((await h.req('GET', `/v1/${path}?limit=0`, apiKey)).statusCode, 422)
    } else {
      const res = (await h.req('GET', `/v1/${path}?limit=2`, apiKey)).json()
      t.equal(res.data.length, 5, `${path}: not paged`)
    }
  }
})

t.test('creates honour Idempotency-Key', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  for (const path of ['playlists', 'schedules', 'creatives']) {
    const a = await h.req('POST', `/v1/${path}`, apiKey, { name: 'Once' }, { 'idempotency-key': `k-${path}` })
    const b = await h.req('POST', `/v1/${path}`, apiKey, { name: 'Once' }, { 'idempotency-key': `k-${path}` })
    t.equal(b.statusCode, 201)
    t.equal(b.headers['idempotent-replayed'], 'true')
    t.equal(b.json().data.id, a.json().data.id)
    t.equal((await h.req('GET', `/v1/${path}`, apiKey)).json().data.length, 1)
  }
})

t.test('playlists: ordered items must exist in the workspace', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const other = await h.workspace('Other')
  const img = await h.ready(apiKey, 'a.png', PNG_1x1)
  const foreign = await h.ready(other.apiKey, 'b.png', PNG_1x1)
  const app = (await h.req('POST', '/v1/app-instances', apiKey, { name: 'Clock', appKey: 'clock' })).json().data
  const pl = await h.req('POST', '/v1/playlists', apiKey, {
    name: 'Lobby',
    items: [
      { kind: 'media', id: img.id, durationMs: 5000 },
      { kind: 'app', id: app.id },
    ],
  })
  t.equal(pl.statusCode, 201)
  t.same(pl.json().data.items, [
    { kind: 'media', id: img.id, durationMs: 5000 },
    { kind: 'app', id: app.id, durationMs: null },
  ])
  const unknown = await h.req('PATCH', `/v1/playlists/${pl.json().data.id}`, apiKey, { items: [{ kind: 'media', id: 'med_nope' }] })
  t.equal(unknown.statusCode, 422)
  t.equal(unknown.json().error, 'validation_error')
  t.match(unknown.json().message, /items\[0\].*med_nope/)
  t.equal((await h.req('POST', '/v1/playlists', apiKey, { name: 'x', items: [{ kind: 'media', id: foreign.id }] })).statusCode, 422, "another workspace's file")
  t.equal((await h.req('POST', '/v1/playlists', apiKey, { name: 'x', items: [{ kind: 'creative', id: app.id }] })).statusCode, 422, 'wrong kind')
  t.equal((await h.req('POST', '/v1/playlists', apiKey, { name: 'x', items: [{ kind: 'playlist', id: 'pl_x' }] })).statusCode, 422, 'playlists do not nest')
  t.equal((await h.req('POST', '/v1/playlists', apiKey, { name: 'x', items: [{ kind: 'media', id: img.id, durationMs: 0 }] })).statusCode, 422)
  // the app is in the playlist: deleting it is refused
  t.equal((await h.req('DELETE', `/v1/app-instances/${app.id}`, apiKey)).statusCode, 409)
})

t.test('schedules: validated by the shared validateSchedule, content must exist', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const pl = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Breakfast' })).json().data
  const body = {
    name: 'Weekdays',
    timezone: 'Europe/London',
    rules: [{ id: 'r1', content: { kind: 'playlist', id: pl.id }, priority: 1, days: [1, 2, 3, 4, 5], start: '07:00', end: '11:00' }],
    fallback: null,
  }
  const created = await h.req('POST', '/v1/schedules', apiKey, body)
  t.equal(created.statusCode, 201)
  t.match(created.json().data, { timezone: 'Europe/London', rules: body.rules, fallback: null })
  const bad = await h.req('POST', '/v1/schedules', apiKey, { ...body, rules: [{ ...body.rules[0], start: '25:00' }] })
  t.equal(bad.statusCode, 422)
  t.equal(bad.json().error, 'validation_error')
  t.match(bad.json().message, /rules\[0\]\.start: "25:00" is not a time/)
  const zone = await h.req('POST', '/v1/schedules', apiKey, { ...body, timezone: 'Mars/Olympus' })
  t.match(zone.json().message, /timezone: unknown time zone/)
  const missing = await h.req('PATCH', `/v1/schedules/${created.json().data.id}`, apiKey, { fallback: { kind: 'media', id: 'med_gone' } })
  t.equal(missing.statusCode, 422)
  t.match(missing.json().message, /fallback: media "med_gone" does not exist/)
  t.equal((await h.req('PATCH', `/v1/schedules/${created.json().data.id}`, apiKey, { rules: 'nope' })).statusCode, 422)
  const ok = await h.req('PATCH', `/v1/schedules/${created.json().data.id}`, apiKey, { fallback: { kind: 'playlist', id: pl.id }, timezone: null })
  t.equal(ok.statusCode, 200)
  t.equal(ok.json().data.timezone, null)
  t.equal((await h.req('DELETE', `/v1/playlists/${pl.id}`, apiKey)).statusCode, 409, 'a playlist a schedule plays cannot go')
})

t.test('apps: catalog with config schemas; instance config validated and defaulted', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const catalog = (await h.req('GET', '/v1/apps/catalog', apiKey)).json().data
  t.same(
    catalog.map((a: { key: string }) => a.key),
    ['clock', 'weather', 'rss'],
  )
  for (const a of catalog) t.equal(a.configSchema.type, 'object')
  const clock = (await h.req('POST', '/v1/app-instances', apiKey, { name: 'Clock', appKey: 'clock', config: { format: '12h' } })).json().data
  t.match(clock, {
    appKey: 'clock',
    config: { format: '12h', showSeconds: false, showDate: true },
    lastSnapshotKey: null,
    lastSnapshotAt: null,
    importSourceId: null,
    deletedAt: null,
    spaceId: /^ws_/,
  })
  const noLoc = await h.req('POST', '/v1/app-instances', apiKey, { name: 'W', appKey: 'weather', config: {} })
  t.equal(noLoc.statusCode, 422)
  t.match(noLoc.json().message, /config/)
  const rss = await h.req('POST', '/v1/app-instances', apiKey, { name: 'News', appKey: 'rss', config: { url: 'https://example.com/feed', maxItems: 500 } })
  t.match(rss.json().message, /config\.maxItems/)
  t.match((await h.req('POST', '/v1/app-instances', apiKey, { name: 'x', appKey: 'doom' })).json().message, /not in the app catalog/)
  t.match((await h.req('POST', '/v1/app-instances', apiKey, { name: 'x' })).json().message, /appKey is required/)
  t.match((await h.req('POST', '/v1/app-instances', apiKey, { name: 'x', appKey: 'clock', config: { colour: 'red' } })).json().message, /config/)
  const changed = await h.req('PATCH', `/v1/app-instances/${clock.id}`, apiKey, { config: { showSeconds: true } })
  t.same(changed.json().data.config, { format: '24h', showSeconds: true, showDate: true }, 'a new config replaces the old one')
  t.equal((await h.req('PATCH', `/v1/app-instances/${clock.id}`, apiKey, { appKey: 'rss' })).statusCode, 422)
})

t.test('folders, layouts, banners, celebrations: their own rules', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const top = (await h.req('POST', '/v1/media-folders', apiKey, { name: 'Top' })).json().data
  const sub = (await h.req('POST', '/v1/media-folders', apiKey, { name: 'Sub', parentId: top.id })).json().data
  t.equal(sub.parentId, top.id)
  t.equal((await h.req('POST', '/v1/media-folders', apiKey, { name: 'x', parentId: 'fld_nope' })).json().error, 'invalid_folder')
  t.match((await h.req('PATCH', `/v1/media-folders/${top.id}`, apiKey, { parentId: sub.id })).json().message, /inside itself/)
  t.equal((await h.req('DELETE', `/v1/media-folders/${top.id}`, apiKey)).statusCode, 409, 'a folder holding a folder')
  const img = await h.ready(apiKey, 'a.png', PNG_1x1, { folderId: sub.id })
  t.equal(img.folderId, sub.id)
  t.equal((await h.req('DELETE', `/v1/media-folders/${sub.id}`, apiKey)).statusCode, 409, 'a folder holding a file')

  const off = await h.req('POST', '/v1/layouts', apiKey, { name: 'L', width: 100, height: 100, zones: [{ id: 'a', x: 50, y: 0, width: 60, height: 10 }] })
  t.match(off.json().message, /outside/)
  const dup = await h.req('POST', '/v1/layouts', apiKey, {
    name: 'L',
    zones: [
      { id: 'a', x: 0, y: 0, width: 1, height: 1 },
      { id: 'a', x: 0, y: 0, width: 1, height: 1 },
    ],
  })
  t.match(dup.json().message, /duplicates/)
  const lay = await h.req('POST', '/v1/layouts', apiKey, {
    name: 'L',
    zones: [{ id: 'a', x: 0, y: 0, width: 10, height: 10, content: { kind: 'media', id: img.id } }],
  })
  t.equal(lay.statusCode, 201)
  t.equal(
    (
      await h.req('POST', '/v1/layouts', apiKey, {
        name: 'L',
        zones: [{ id: 'a', x: 0, y: 0, width: 10, height: 10, content: { kind: 'media', id: 'med_x' } }],
      })
    ).statusCode,
    422,
  )

  t.match((await h.req('POST', '/v1/banners', apiKey, { name: 'B' })).json().message, /text is required/)
  t.equal((await h.req('POST', '/v1/banners', apiKey, { name: 'B', text: 'x', backgroundColor: 'red' })).statusCode, 422)
  t.match((await h.req('POST', '/v1/banners', apiKey, { name: 'B', text: 'Hi' })).json().data, { position: 'bottom', backgroundColor: '#000000' })

  t.equal((await h.req('POST', '/v1/celebration-entries', apiKey, { name: 'C', person: 'Ada', date: '2026-13-01' })).statusCode, 422)
  const cel = (
    await h.req('POST', '/v1/celebration-entries', apiKey, { name: 'C', person: 'Ada', date: '2026-12-10', occasion: 'work_anniversary', mediaId: img.id })
  ).json().data
  t.match(cel, { person: 'Ada', occasion: 'work_anniversary', mediaId: img.id, message: null })
})
