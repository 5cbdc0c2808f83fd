// The timeline's bounds, through the HTTP interface: a schedule holds at most 200 rules;
// one saved with 1,000 before that limit still answers its timeline (5,000 segments at
// most, `truncated` past that) and its previews (pages stop at 20,000 segments), and while
// such a walk runs other requests are answered; `from` and `to` are date-times in the
// document and in what the routes accept.
import t, { type Test } from 'tap'
import { servicesOf } from '../../src/app.js'
import { SCHEDULE_MAX_RULES } from '../../src/domains/content/kinds.js'
import { PREVIEW_MAX_PAGE_SEGMENTS } from '../../src/domains/timeline/PreviewService.js'
import { TIMELINE_MAX_SEGMENTS } from '../../src/domains/timeline/TimelineService.js'
import { pairScreen } from '../screenHelpers.js'
import { buildMedia, PNG_1x1, type MediaHarness } from '../content/fixtures.js'

const hhmm = (min: number) => `${String(Math.floor(min / 60)).padStart(2, '0')}:${String(min % 60).padStart(2, '0')}`

/** `n` one-minute rules back to back from midnight, each outranking the one before. */
const minuteRules = (n: number, content: { kind: string; id: string }) =>
  Array.from({ length: n }, (_, i) => ({ id: `m${i}`, priority: i, start: hhmm(i), end: hhmm(i + 1), content }))

/** A schedule of `rules` rules as one saved before the limit was: written to the database under the API. */
async function legacySchedule(h: MediaHarness, apiKey: string, rules: number, content: { kind: string; id: string }, fallback: unknown) {
  const made = await h.req('POST', '/v1/schedules', apiKey, { name: 'Every minute', rules: minuteRules(1, content), fallback })
  t.equal(made.statusCode, 201, made.body.slice(0, 200))
  const id = made.json().data.id as string
  const db = servicesOf(h.app).db.kysely
  const row = await db.selectFrom('content_items').select('body').where('id', '=', id).executeTakeFirstOrThrow()
  const body = { ...JSON.parse(row.body as string), rules: minuteRules(rules, content) }
  await db
    .updateTable('content_items')
    .set({ body: JSON.stringify(body) })
    .where('id', '=', id)
    .execute()
  return id
}

async function setup(t: Test, screens = 1) {
  const h = await buildMedia(t) // its clock reads 2026-06-01T12:00:00Z
  const { apiKey } = await h.workspace()
  const ids: string[] = []
  for (let i = 0; i < screens; i++) ids.push((await pairScreen(h, apiKey, `Screen ${i}`)).screenId)
  const idle = await h.ready(apiKey, 'idle.png', PNG_1x1)
  const media = { kind: 'media', id: idle.id }
  return { h, apiKey, ids, idle, media }
}

t.test(`a schedule holds at most ${SCHEDULE_MAX_RULES} rules: one more answers 422 naming the limit, on create and on update`, async (t) => {
  const { h, apiKey, media } = await setup(t, 0)
  t.equal(SCHEDULE_MAX_RULES, 200)
  const full = await h.req('POST', '/v1/schedules', apiKey, { name: 'Full', rules: minuteRules(200, media), fallback: null })
  t.equal(full.statusCode, 201, full.body.slice(0, 200))
  const over = await h.req('POST', '/v1/schedules', apiKey, { name: 'Over', rules: minuteRules(201, media), fallback: null })
  t.equal(over.statusCode, 422)
  t.same(over.json(), { error: 'validation_error', message: 'body.rules must NOT have more than 200 items.' })
  const id = full.json().data.id
  const patched = await h.req('PATCH', `/v1/schedules/${id}`, apiKey, { rules: minuteRules(201, media) })
  t.equal(patched.statusCode, 422)
  t.match(patched.json(), { error: 'validation_error', message: /200 items/ })
  t.equal((await h.req('GET', `/v1/schedules/${id}`, apiKey)).json().data.rules.length, 200, 'unchanged')
  const doc = (await h.req('GET', '/v1/openapi.json', null)).json()
  const schema = JSON.stringify(doc.paths['/v1/schedules'].post.requestBody.content['application/json'].schema)
  t.match(schema, /"maxItems":200/, 'the document states the limit')
})

t.test('a 1,000-rule schedule saved before the limit: its 24 h timeline, its 31-day timeline cut at 5,000 segments', async (t) => {
  const { h, apiKey, ids, media, idle } = await setup(t)
  const sch = await legacySchedule(h, apiKey, 1000, media, media)
  await h.req('PATCH', `/v1/screens/${ids[0]}`, apiKey, { timezone: 'UTC' })
  t.equal((await h.req('POST', `/v1/screens/${ids[0]}/assign`, apiKey, { contentKind: 'schedule', contentId: sch })).statusCode, 200)
  const next = await h.req('GET', `/v1/screens/${ids[0]}/timeline`, apiKey)
  t.equal(next.statusCode, 200, String(next.statusCode))
  t.match(next.json().data, { from: '2026-06-01T12:00:00.000Z', to: '2026-06-02T12:00:00.000Z', truncated: false }, 'the default: the next 24 hours')
  const day = await h.req('GET', `/v1/screens/${ids[0]}/timeline?from=2026-06-02T00:00:00Z&to=2026-06-03T00:00:00Z`, apiKey)
  t.equal(day.statusCode, 200)
  const tl = day.json().data
  t.equal(tl.truncated, false)
  // Each rule for its minute from midnight, then the fallback from 16:40.
  t.equal(tl.segments.length, 1001)
  t.match(tl.segments[0], { start: '2026-06-02T00:00:00.000Z', end: '2026-06-02T00:01:00.000Z', ruleId: 'm0', contentId: idle.id })
  t.match(tl.segments[999], { start: '2026-06-02T16:39:00.000Z', end: '2026-06-02T16:40:00.000Z', ruleId: 'm999' })
  t.match(tl.segments[1000], { start: '2026-06-02T16:40:00.000Z', end: '2026-06-03T00:00:00.000Z', ruleId: null, contentId: idle.id })
  const month = await h.req('GET', `/v1/screens/${ids[0]}/timeline?from=2026-06-01T00:00:00Z&to=2026-07-02T00:00:00Z`, apiKey)
  t.equal(month.statusCode, 200)
  t.equal(month.json().data.truncated, true)
  t.equal(month.json().data.segments.length, TIMELINE_MAX_SEGMENTS)
})

t.test('while a 1,000-rule month is walked, another request is answered before it', async (t) => {
  const { h, apiKey, ids, media } = await setup(t)
  const sch = await legacySchedule(h, apiKey, 1000, media, media)
  t.equal((await h.req('POST', `/v1/screens/${ids[0]}/assign`, apiKey, { contentKind: 'schedule', contentId: sch })).statusCode, 200)
  // The walk starts as soon as the screen's desired state is built: send the other request then.
  const desired = servicesOf(h.app).desiredState
  const build = desired.build.bind(desired)
  let built!: () => void
  const started = new Promise<void>((resolve) => {
    built = resolve
  })
  desired.build = async (...args: Parameters<typeof build>) => {
    const state = await build(...args)
    built()
    return state
  }
  const order: string[] = []
  const month = h.req('GET', `/v1/screens/${ids[0]}/timeline?from=2026-06-01T00:00:00Z&to=2026-07-02T00:00:00Z`, apiKey).then((r) => {
    order.push(`timeline ${r.statusCode}`)
  })
  await started
  const me = h.req('GET', '/v1/me', apiKey).then((r) => {
    order.push(`me ${r.statusCode}`)
  })
  await Promise.all([month, me])
  t.same(order, ['me 200', 'timeline 200'])
})

t.test(`a preview page stops at ${PREVIEW_MAX_PAGE_SEGMENTS} segments and goes on from the next screen`, async (t) => {
  const { h, apiKey, ids, media } = await setup(t, 5)
  const sch = await legacySchedule(h, apiKey, 1000, media, media)
  const body = (cursor?: string) => ({
    request: { method: 'POST', path: '/v1/screens/bulk-assign', body: { screenIds: ids, contentKind: 'schedule', contentId: sch } },
    from: '2026-06-01T12:00:00Z',
    to: '2026-06-08T12:00:00Z',
    ...(cursor ? { cursor } : {}),
  })
  // Each screen: 1 segment before (nothing assigned), 5,000 after (a rule a minute, cut there).
  const rows = (page: any) => page.data.map((s: any) => [s.screenId, s.changed, s.truncated, s.before.length, s.after.length])
  const sorted = [...ids].sort()
  const first = await h.req('POST', '/v1/timeline/preview', apiKey, body())
  t.equal(first.statusCode, 200, String(first.statusCode))
  const page = first.json()
  t.same(
    rows(page),
    sorted.slice(0, 4).map((id) => [id, true, true, 1, TIMELINE_MAX_SEGMENTS]),
    'four screens reach the page budget',
  )
  t.equal(page.screenCount, 5)
  t.type(page.nextCursor, 'string')
  const second = (await h.req('POST', '/v1/timeline/preview', apiKey, body(page.nextCursor))).json()
  t.same(rows(second), [[sorted[4], true, true, 1, TIMELINE_MAX_SEGMENTS]])
  t.equal(second.nextCursor, null)
})

t.test('from and to are date-times with a zone: in the document, and a value that is not one answers 422', async (t) => {
  const { h, apiKey, ids } = await setup(t)
  const doc = (await h.req('GET', '/v1/openapi.json', null)).json()
  const query = (path: string) => Object.fromEntries(doc.paths[path].get.parameters.filter((p: any) => p.in === 'query').map((p: any) => [p.name, p.schema]))
  for (const path of ['/v1/screens/{id}/timeline', '/v1/play-log/summary', '/v1/screens/{id}/play-log', '/v1/play-log.csv']) {
    const q = query(path)
    t.equal(q.from?.format, 'date-time', `${path} from`)
    t.equal(q.to?.format, 'date-time', `${path} to`)
  }
  const previewBody = doc.paths['/v1/timeline/preview'].post.requestBody.content['application/json'].schema
  t.equal(previewBody.properties.from.format, 'date-time')
  t.equal(previewBody.properties.to.format, 'date-time')

  const hint = 'must be an ISO 8601 date-time with a time zone, such as 2026-01-31T00:00:00Z.'
  const url = `/v1/screens/${ids[0]}/timeline`
  for (const bad of ['2026-06-02', '2026-06-02T10:00Z', '2026-06-02T10:00:00', '2026-02-30T00:00:00Z', 'tomorrow', '']) {
    const res = await h.req('GET', `${url}?from=${encodeURIComponent(bad)}`, apiKey)
    t.equal(res.statusCode, 422, `from=${bad}`)
    t.same(res.json(), { error: 'validation_error', message: `querystring.from ${hint}` }, `from=${bad}`)
    const summary = await h.req('GET', `/v1/play-log/summary?from=${encodeURIComponent(bad)}&to=2026-06-03T00:00:00Z`, apiKey)
    t.same([summary.statusCode, summary.json()], [422, { error: 'validation_error', message: `querystring.from ${hint}` }], `summary from=${bad}`)
    const preview = await h.req('POST', '/v1/timeline/preview', apiKey, {
      request: { method: 'POST', path: `/v1/screens/${ids[0]}/assign`, body: { contentKind: null } },
      to: bad,
    })
    t.same([preview.statusCode, preview.json()], [422, { error: 'validation_error', message: `body.to ${hint}` }], `preview to=${bad}`)
  }
  // A leap second is a date-time the format allows but no instant holds: refused all the same.
  const leap = await h.req('GET', `${url}?from=2026-06-30T23:59:60Z`, apiKey)
  t.same([leap.statusCode, leap.json()], [422, { error: 'validation_error', message: `from ${hint}` }])
  // Every date-time form the document allows is taken: offsets with or without a colon, a lower-case t and z.
  for (const [from, want] of [
    ['2026-06-02T10:00:00+02:00', '2026-06-02T08:00:00.000Z'],
    ['2026-06-02T10:00:00+0200', '2026-06-02T08:00:00.000Z'],
    ['2026-06-02t08:00:00.5z', '2026-06-02T08:00:00.500Z'],
  ]) {
    const res = await h.req('GET', `${url}?from=${encodeURIComponent(from!)}`, apiKey)
    t.equal(res.statusCode, 200, `${from}: ${res.body.slice(0, 200)}`)
    t.equal(res.json().data.from, want, from)
  }
})
