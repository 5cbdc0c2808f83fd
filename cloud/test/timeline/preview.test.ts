// POST /v1/timeline/preview against the real content library and database: for each write it
// takes (assignment, bulk assignment, schedule create and update, cast, emergency) the `after`
// it answers equals the timeline read once the write is really made; nothing is written,
// published or announced by the preview; a write the caller may not make answers the
// write's own error; approval holds say `held`; pages of screens.
import t, { type Test } from 'tap'
import { servicesOf } from '../../src/app.js'
import { makeKey } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { buildMedia, PNG_1x1, type MediaHarness } from '../content/fixtures.js'
import { seededRandom } from '@svc/shared/testing'

const WINDOW = { from: '2026-06-01T12:00:00Z', to: '2026-06-03T12:00:00Z' }

async function setup(t: Test, screens = 3) {
  const h = await buildMedia(t) // its clock reads 2026-06-01T12:00:00Z
  const { apiKey, workspaceId } = await h.workspace()
  const ids: string[] = []
  for (let i = 0; i < screens; i++) ids.push((await pairScreen(h, apiKey, `Screen ${i}`)).screenId)
  for (const id of ids) await h.req('PATCH', `/v1/screens/${id}`, apiKey, { timezone: 'Europe/Berlin' })
  const idle = await h.ready(apiKey, 'idle.png', PNG_1x1)
  const promo = await h.ready(apiKey, 'promo.png', PNG_1x1)
  const lunch = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Lunch menu', items: [{ kind: 'media', id: idle.id }] })).json().data
  const sch = (
    await h.req('POST', '/v1/schedules', apiKey, {
      name: 'Opening hours',
      rules: [{ id: 'lunch', priority: 10, start: '15:00', end: '17:00', content: { kind: 'playlist', id: lunch.id } }],
      fallback: { kind: 'media', id: idle.id },
    })
  ).json().data
  for (const id of ids) await h.req('POST', `/v1/screens/${id}/assign`, apiKey, { contentKind: 'schedule', contentId: sch.id })
  return { h, apiKey, workspaceId, ids, idle, promo, lunch, sch }
}

const preview = (h: MediaHarness, key: string, method: string, path: string, body: unknown, extra: Record<string, unknown> = {}) =>
  h.req('POST', '/v1/timeline/preview', key, { request: { method, path, body }, ...WINDOW, ...extra })

const timeline = async (h: MediaHarness, key: string, id: string) =>
  (await h.req('GET', `/v1/screens/${id}/timeline?from=${WINDOW.from}&to=${WINDOW.to}`, key)).json().data.segments

/** What a screen shows to an outside observer of the write: its version, assignment, casts and emergencies. */
async function footprint(h: MediaHarness, key: string, ids: string[]) {
  const screens = await Promise.all(ids.map(async (id) => (await h.req('GET', `/v1/screens/${id}`, key)).json().data))
  return {
    screens: screens.map((s) => [s.id, s.desiredVersion, s.contentKind, s.contentId]),
    casts: (await h.req('GET', '/v1/casts', key)).json().data.length,
    emergencies: (await h.req('GET', '/v1/emergencies', key)).json().data.length,
    schedules: (await h.req('GET', '/v1/schedules', key)).json().data.map((s: any) => JSON.stringify(s)),
    outbox: (await servicesOf(h.app).db.all('SELECT id FROM events_outbox')).length,
  }
}

/** `after` with the previewed takeover's placeholder id replaced by the real one. */
const withId = (segments: any[], from: string, to: string) => JSON.parse(JSON.stringify(segments).replaceAll(from, to))

t.test('an assignment: after equals the timeline once assigned; the preview wrote and published nothing', async (t) => {
  const { h, apiKey, ids, promo } = await setup(t)
  const before = await footprint(h, apiKey, ids)
  const res = await preview(h, apiKey, 'POST', `/v1/screens/${ids[0]}/assign`, { contentKind: 'media', contentId: promo.id })
  t.equal(res.statusCode, 200, res.body)
  const p = res.json()
  t.match(p, { from: '2026-06-01T12:00:00.000Z', to: '2026-06-03T12:00:00.000Z', held: false, screenCount: 1, nextCursor: null })
  t.equal(p.data.length, 1)
  t.match(p.data[0], { screenId: ids[0], changed: true })
  t.same(p.data[0].before, await timeline(h, apiKey, ids[0]), 'before is the timeline now')
  t.match(p.data[0].after, [
    { source: 'assignment', contentId: promo.id, end: '2026-06-03T12:00:00.000Z', reason: 'The screen is assigned media "promo.png".' },
  ])
  t.same(await footprint(h, apiKey, ids), before, 'nothing stored, published or announced')

  await h.req('POST', `/v1/screens/${ids[0]}/assign`, apiKey, { contentKind: 'media', contentId: promo.id })
  t.same(await timeline(h, apiKey, ids[0]), p.data[0].after, 'after is what the screen then plays')
})

t.test('a bulk assignment, paged two screens at a time; clearing', async (t) => {
  const { h, apiKey, ids, lunch } = await setup(t)
  const first = (
    await preview(h, apiKey, 'POST', '/v1/screens/bulk-assign', { nodeId: null, contentKind: 'playlist', contentId: lunch.id }, { limit: 2 })
  ).json()
  t.equal(first.screenCount, 3)
  t.equal(first.data.length, 2)
  t.ok(first.nextCursor)
  const second = (
    await preview(
      h,
      apiKey,
      'POST',
      '/v1/screens/bulk-assign',
      { nodeId: null, contentKind: 'playlist', contentId: lunch.id },
      { limit: 2, cursor: first.nextCursor },
    )
  ).json()
  t.equal(second.data.length, 1)
  t.equal(second.nextCursor, null)
  t.same([...first.data, ...second.data].map((s: any) => s.screenId).sort(), [...ids].sort(), 'every screen once')
  await h.req('POST', '/v1/screens/bulk-assign', apiKey, { nodeId: null, contentKind: 'playlist', contentId: lunch.id })
  for (const s of [...first.data, ...second.data]) t.same(await timeline(h, apiKey, s.screenId), s.after, s.screenId)

  const cleared = (await preview(h, apiKey, 'POST', `/v1/screens/${ids[1]}/assign`, { contentKind: null })).json()
  t.match(cleared.data[0].after, [{ source: 'none', reason: 'Nothing is assigned to the screen.' }])
})

t.test('a cast and an emergency: after equals the timeline once started (the placeholder id aside)', async (t) => {
  const { h, apiKey, ids, promo, idle } = await setup(t)
  const cast = { contentKind: 'media', contentId: promo.id, scopeKind: 'screens', screenIds: ids.slice(0, 2), expiresAt: '2026-06-01T14:00:00Z' }
  const p = (await preview(h, apiKey, 'POST', '/v1/casts', cast)).json()
  t.equal(p.screenCount, 2)
  t.match(p.data[0].after.slice(0, 3), [
    {
      source: 'cast',
      castId: 'cast_preview',
      end: '2026-06-01T13:00:00.000Z',
      reason: 'Cast "promo.png" overrides the fallback of schedule "Opening hours" until 16:00.',
    },
    {
      source: 'cast',
      castId: 'cast_preview',
      end: '2026-06-01T14:00:00.000Z',
      reason: 'Cast "promo.png" overrides rule "lunch" of schedule "Opening hours" until 16:00.',
    },
    { source: 'schedule', ruleId: 'lunch', start: '2026-06-01T14:00:00.000Z' },
  ])
  t.equal((await h.req('GET', '/v1/casts', apiKey)).json().data.length, 0, 'no cast was made')
  const made = (await h.req('POST', '/v1/casts', apiKey, cast)).json().data
  for (const s of p.data) t.same(await timeline(h, apiKey, s.screenId), withId(s.after, 'cast_preview', made.id), s.screenId)

  const emergency = { contentKind: 'media', contentId: idle.id, scopeKind: 'all', message: 'Leave now' }
  const e = (await preview(h, apiKey, 'POST', '/v1/emergencies', emergency)).json()
  t.equal(e.screenCount, 3)
  t.match(e.data[0].after, [{ source: 'emergency', emergencyId: 'emg_preview' }])
  t.equal((await h.req('GET', '/v1/emergencies', apiKey)).json().data.length, 0, 'no emergency was started')
  const started = (await h.req('POST', '/v1/emergencies', apiKey, emergency)).json().data
  for (const s of e.data) t.same(await timeline(h, apiKey, s.screenId), withId(s.after, 'emg_preview', started.id), s.screenId)
})

t.test('a schedule update changes every screen showing it; a create touches none; an approval hold says held', async (t) => {
  const { h, apiKey, ids, sch, lunch } = await setup(t)
  const change = { rules: [{ id: 'lunch', priority: 10, start: '12:00', end: '13:00', content: { kind: 'playlist', id: lunch.id } }] }
  const p = (await preview(h, apiKey, 'PATCH', `/v1/schedules/${sch.id}`, change)).json()
  t.equal(p.screenCount, 3)
  t.ok(p.data.every((s: any) => s.changed))
  t.match(
    p.data[0].after.filter((s: any) => s.ruleId === 'lunch'),
    [{ startLocal: '2026-06-02T12:00:00+02:00', endLocal: '2026-06-02T13:00:00+02:00' }, { startLocal: '2026-06-03T12:00:00+02:00' }],
  )
  t.equal((await h.req('GET', `/v1/schedules/${sch.id}`, apiKey)).json().data.rules[0].start, '15:00', 'unchanged')
  const patched = await h.req('PATCH', `/v1/schedules/${sch.id}`, apiKey, change)
  t.equal(patched.statusCode, 200, patched.body)
  for (const s of p.data) t.same(await timeline(h, apiKey, s.screenId), s.after, s.screenId)

  const created = (await preview(h, apiKey, 'POST', '/v1/schedules', { name: 'New', rules: [], fallback: { kind: 'playlist', id: lunch.id } })).json()
  t.match(created, { data: [], screenCount: 0, held: false })

  // Approval at the store the schedule and the screens move to: an editor's changes wait;
  // the screens keep the approved version.
  const store = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store', parentId: null })).json().data.id
  for (const id of ids) t.equal((await h.req('PATCH', `/v1/screens/${id}`, apiKey, { nodeId: store })).statusCode, 200)
  t.equal((await h.req('PATCH', `/v1/schedules/${sch.id}`, apiKey, { nodeId: store })).statusCode, 200)
  const grace = (await h.req('POST', '/v1/users', apiKey, { email: 'grace@example.com', name: 'Grace', role: 'editor' })).json().data
  const put = await h.req('PUT', `/v1/nodes/${store}/approval-policy`, apiKey, { required: true, approvers: [grace.id] })
  t.equal(put.statusCode, 200, put.body)
  const editor = await makeKey(h, apiKey, ['screen.view', 'schedule.view', 'schedule.edit', 'approval.view', 'approval.request'])
  const held = (await preview(h, editor.secret, 'PATCH', `/v1/schedules/${sch.id}`, { rules: [] })).json()
  t.equal(held.held, true)
  t.equal(held.data.length, 3)
  t.ok(
    held.data.every((s: any) => !s.changed && JSON.stringify(s.after) === JSON.stringify(s.before)),
    'nothing changes until approved',
  )
})

t.test("refused writes answer the write's own error; the preview's own window and request are checked", async (t) => {
  const { h, apiKey, ids, promo } = await setup(t)
  const same = async (method: string, path: string, body: unknown, key = apiKey) => {
    const p = await preview(h, key, method, path, body)
    const w = await h.req(method, path, key, body)
    t.equal(p.statusCode, w.statusCode, `${method} ${path}: ${w.body}`)
    t.same(p.json(), w.json())
    return p
  }
  t.equal((await same('POST', `/v1/screens/${ids[0]}/assign`, { contentKind: 'media', contentId: 'med_nope' })).statusCode, 422)
  t.equal((await same('POST', `/v1/screens/${ids[0]}/assign`, { contentKind: 'media', contentId: promo.id, extra: 1 })).statusCode, 422)
  t.equal((await same('POST', '/v1/casts', { contentKind: 'media', contentId: promo.id, scopeKind: 'screens', screenIds: ['scr_nope'] })).statusCode, 422)
  t.equal((await same('PATCH', '/v1/schedules/sch_nope', { rules: [] })).statusCode, 404)
  const viewer = await makeKey(h, apiKey, ['screen.view'])
  t.equal((await same('POST', `/v1/screens/${ids[0]}/assign`, { contentKind: 'media', contentId: promo.id }, viewer.secret)).statusCode, 403)
  const elsewhere = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Elsewhere', parentId: null })).json().data.id
  const pinned = await makeKey(h, apiKey, 'all', elsewhere)
  t.equal((await same('POST', `/v1/screens/${ids[0]}/assign`, { contentKind: 'media', contentId: promo.id }, pinned.secret)).statusCode, 404)
  const other = await h.workspace('Other')
  t.equal((await same('POST', `/v1/screens/${ids[0]}/assign`, { contentKind: 'media', contentId: promo.id }, other.apiKey)).statusCode, 404)

  const blind = await makeKey(h, apiKey, ['screen.edit'])
  t.equal(
    (await preview(h, blind.secret, 'POST', `/v1/screens/${ids[0]}/assign`, { contentKind: null })).statusCode,
    403,
    'the preview reads timelines: screen.view',
  )
  for (const [method, path] of [
    ['DELETE', `/v1/screens/${ids[0]}`],
    ['POST', '/v1/api-keys'],
    ['GET', '/v1/screens'],
    ['POST', '/v1/screens/../api-keys'],
  ]) {
    const res = await preview(h, apiKey, method!, path!, {})
    t.equal(res.statusCode, 422, `${method} ${path}`)
    t.match(res.json(), { error: 'validation_error', message: /^request: only these writes can be previewed: POST \/v1\/screens\/<id>\/assign/ })
  }
  const long = await preview(
    h,
    apiKey,
    'POST',
    `/v1/screens/${ids[0]}/assign`,
    { contentKind: null },
    { from: '2026-06-01T00:00:00Z', to: '2026-06-08T00:00:01Z' },
  )
  t.same(long.json(), { error: 'validation_error', message: 'from and to are at most 7 days apart.' })
  t.equal((await h.req('GET', `/v1/screens/${ids[0]}`, apiKey)).json().data.contentKind, 'schedule', 'nothing was assigned along the way')
})

t.test('property: over 24 seeded writes in a row, each preview’s after equals the timeline read after making it', async (t) => {
  const { h, apiKey, ids, idle, promo, lunch, sch } = await setup(t)
  const r = seededRandom(7)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const hhmm = () => `${String(Math.floor(r() * 24)).padStart(2, '0')}:${pick(['00', '30'])}`
  const content = [
    { contentKind: 'media', contentId: idle.id },
    { contentKind: 'media', contentId: promo.id },
    { contentKind: 'playlist', contentId: lunch.id },
    { contentKind: 'schedule', contentId: sch.id },
  ]
  let emergencies = 0
  let refused = 0
  let changed = 0
  for (let i = 0; i < 24; i++) {
    const kind = pick(['assign', 'bulk', 'schedule', 'cast', 'cast', 'emergency'] as const)
    let method = 'POST'
    let path: string
    let body: Record<string, unknown>
    let placeholder: string | null = null
    if (kind === 'assign') [path, body] = [`/v1/screens/${pick(ids)}/assign`, { ...pick(content) }]
    else if (kind === 'bulk') [path, body] = ['/v1/screens/bulk-assign', { screenIds: ids.filter(() => r() < 0.6), ...pick(content) }]
    else if (kind === 'schedule') {
      method = 'PATCH'
      path = `/v1/schedules/${sch.id}`
      const rules = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, n) => ({
        id: `r${n}`,
        priority: Math.floor(r() * 3),
        start: hhmm(),
        end: hhmm(),
        content: { kind: pick(['media', 'playlist']), id: r() < 0.5 ? promo.id : lunch.id },
      })).map((x) => ({ ...x, content: { kind: x.content.id === lunch.id ? 'playlist' : 'media', id: x.content.id } }))
      body = { rules, fallback: r() < 0.5 ? { kind: 'media', id: idle.id } : null }
    } else if (kind === 'cast') {
      path = '/v1/casts'
      const expires = r() < 0.3 ? {} : { expiresAt: new Date(Date.parse(WINDOW.from) + Math.floor(1 + r() * 40) * 3_600_000).toISOString() }
      body = { ...pick(content.slice(0, 3)), scopeKind: 'screens', screenIds: ids.filter(() => r() < 0.6).concat(ids[0]!), ...expires }
      placeholder = 'cast_preview'
    } else {
      if (emergencies++) continue // one emergency is enough: everything under it stops changing
      path = '/v1/emergencies'
      body = { ...pick(content.slice(0, 3)), scopeKind: 'screens', screenIds: [pick(ids)] }
      placeholder = 'emg_preview'
    }
    const res = await preview(h, apiKey, method, path, body)
    const write = await h.req(method, path, apiKey, body)
    if (res.statusCode !== 200) {
      // A write the preview refuses is refused the same way when made.
      t.same([res.statusCode, res.json()], [write.statusCode, write.json()], `${i} ${kind} refused alike`)
      refused++
      continue
    }
    t.ok(write.statusCode < 300, `${i} ${kind} made: ${write.body}`)
    const p = res.json()
    for (const s of p.data) {
      const expected = placeholder ? withId(s.after, placeholder, write.json().data.id) : s.after
      t.same(await timeline(h, apiKey, s.screenId), expected, `${i} ${kind} ${s.screenId}`)
      changed += s.changed ? 1 : 0
    }
  }
  t.ok(refused < 6, `most writes were made (${refused} refused)`)
  t.ok(changed > 15, `the writes changed what screens play (${changed} screen changes)`)
})
