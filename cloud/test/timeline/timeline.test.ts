// GET /v1/screens/<id>/timeline against the real content library and database: a schedule
// in the screen's own zone (set with PATCH), a cast over it with the reason naming both,
// the window's defaults and bounds, and tenancy, pins and permissions.
import t, { type Test } from 'tap'
import { makeKey } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { buildMedia, PNG_1x1 } from '../content/fixtures.js'

async function setup(t: Test) {
  const h = await buildMedia(t) // its clock reads 2026-06-01T12:00:00Z: 14:00 in Berlin
  const { apiKey, workspaceId } = await h.workspace()
  const screen = await pairScreen(h, apiKey, 'Lobby')
  const idle = await h.ready(apiKey, 'idle.png', PNG_1x1)
  const promo = await h.ready(apiKey, 'promo.png', PNG_1x1)
  const lunch = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Lunch menu', items: [{ kind: 'media', id: idle.id }] })).json().data
  const schedule = await h.req('POST', '/v1/schedules', apiKey, {
    name: 'Opening hours',
    rules: [{ id: 'lunch', priority: 10, start: '15:00', end: '17:00', content: { kind: 'playlist', id: lunch.id } }],
    fallback: { kind: 'media', id: idle.id },
  })
  t.equal(schedule.statusCode, 201, schedule.body)
  const sch = schedule.json().data
  const zone = await h.req('PATCH', `/v1/screens/${screen.screenId}`, apiKey, { timezone: 'Europe/Berlin' })
  t.equal(zone.statusCode, 200, zone.body)
  t.equal(zone.json().data.timezone, 'Europe/Berlin')
  const assigned = await h.req('POST', `/v1/screens/${screen.screenId}/assign`, apiKey, { contentKind: 'schedule', contentId: sch.id })
  t.equal(assigned.statusCode, 200, assigned.body)
  return { h, apiKey, workspaceId, screen, idle, promo, lunch, sch }
}

t.test("the next 24 hours by default: the schedule's fallback and its lunch rule in the screen's zone, each with its reason", async (t) => {
  const { h, apiKey, screen, idle, lunch, sch } = await setup(t)
  const res = await h.req('GET', `/v1/screens/${screen.screenId}/timeline`, apiKey)
  t.equal(res.statusCode, 200, res.body)
  const tl = res.json().data
  t.match(tl, { screenId: screen.screenId, timezone: 'Europe/Berlin', from: '2026-06-01T12:00:00.000Z', to: '2026-06-02T12:00:00.000Z', truncated: false })
  t.same(
    tl.segments.map((s: any) => [s.start, s.end, s.source, s.contentId, s.ruleId]),
    [
      ['2026-06-01T12:00:00.000Z', '2026-06-01T13:00:00.000Z', 'schedule', idle.id, null],
      ['2026-06-01T13:00:00.000Z', '2026-06-01T15:00:00.000Z', 'schedule', lunch.id, 'lunch'],
      ['2026-06-01T15:00:00.000Z', '2026-06-02T12:00:00.000Z', 'schedule', idle.id, null],
    ],
  )
  t.match(tl.segments[1], {
    startLocal: '2026-06-01T15:00:00+02:00',
    endLocal: '2026-06-01T17:00:00+02:00',
    contentKind: 'playlist',
    contentName: 'Lunch menu',
    scheduleId: sch.id,
    scheduleName: 'Opening hours',
    reason: 'Rule "lunch" of schedule "Opening hours" wins from 15:00 to 17:00.',
    overridden: [],
  })
  t.equal(tl.segments[0].reason, 'No rule of schedule "Opening hours" is on from 14:00 to 15:00, so its fallback plays.')
})

t.test('a cast over the lunch rule: the reason names the cast (by its name), the rule and when the cast ends', async (t) => {
  const { h, apiKey, screen, promo, lunch } = await setup(t)
  const cast = await h.req('POST', '/v1/casts', apiKey, {
    contentKind: 'media',
    contentId: promo.id,
    scopeKind: 'screens',
    screenIds: [screen.screenId],
    expiresAt: '2026-06-01T14:00:00.000Z',
  })
  t.equal(cast.statusCode, 201, cast.body)
  const castId = cast.json().data.id
  const tl = (await h.req('GET', `/v1/screens/${screen.screenId}/timeline?from=2026-06-01T13:30:00Z&to=2026-06-01T16:00:00Z`, apiKey)).json().data
  t.same(
    tl.segments.map((s: any) => [s.start, s.end, s.source, s.castId]),
    [
      ['2026-06-01T13:30:00.000Z', '2026-06-01T14:00:00.000Z', 'cast', castId],
      ['2026-06-01T14:00:00.000Z', '2026-06-01T15:00:00.000Z', 'schedule', null],
      ['2026-06-01T15:00:00.000Z', '2026-06-01T16:00:00.000Z', 'schedule', null],
    ],
  )
  t.equal(
    tl.segments[0].reason,
    'Cast "promo.png" overrides rule "lunch" of schedule "Opening hours" until 16:00.',
    "the cast by its content's name, not its id",
  )
  t.match(tl.segments[0].overridden, [{ source: 'schedule', contentId: lunch.id, ruleId: 'lunch' }])
})

t.test('the window: defaults, at most 31 days, to after from, ISO dates; a bad zone is refused', async (t) => {
  const { h, apiKey, screen } = await setup(t)
  const url = `/v1/screens/${screen.screenId}/timeline`
  const onlyTo = (await h.req('GET', `${url}?to=2026-06-10T00:00:00Z`, apiKey)).json().data
  t.match(onlyTo, { from: '2026-06-09T00:00:00.000Z', to: '2026-06-10T00:00:00.000Z' }, 'to alone: the 24 hours before it')
  const month = await h.req('GET', `${url}?from=2026-06-01T00:00:00Z&to=2026-07-02T00:00:00Z`, apiKey)
  t.equal(month.statusCode, 200, '31 days is allowed')
  t.equal(month.json().data.segments.length, 31 * 2 + 1, 'the lunch rule each day, the fallback around it')
  for (const [q, message] of [
    ['from=2026-06-01T00:00:00Z&to=2026-07-02T00:00:01Z', 'from and to are at most 31 days apart.'],
    ['from=2026-06-01T00:00:00Z&to=2026-06-01T00:00:00Z', 'to must be after from.'],
    ['from=2026-06-02T00:00:00Z&to=2026-06-01T00:00:00Z', 'to is before from.'],
    ['from=yesterday', 'querystring.from must be an ISO 8601 date-time with a time zone, such as 2026-01-31T00:00:00Z.'],
  ]) {
    const res = await h.req('GET', `${url}?${q}`, apiKey)
    t.equal(res.statusCode, 422, q)
    t.same(res.json(), { error: 'validation_error', message }, q)
  }
  const zone = await h.req('PATCH', `/v1/screens/${screen.screenId}`, apiKey, { timezone: 'Mars/Olympus' })
  t.equal(zone.statusCode, 422)
  t.same(zone.json(), { error: 'validation_error', message: 'timezone: unknown time zone "Mars/Olympus"; use an IANA name such as "Europe/London".' })
  t.equal((await h.req('GET', `/v1/screens/${screen.screenId}`, apiKey)).json().data.timezone, 'Europe/Berlin', 'unchanged')
})

t.test('another workspace, a pin elsewhere and an unknown id answer 404; without screen.view, 403', async (t) => {
  const { h, apiKey, screen } = await setup(t)
  const other = await h.workspace('Other')
  const url = `/v1/screens/${screen.screenId}/timeline`
  t.equal((await h.req('GET', url, other.apiKey)).statusCode, 404)
  t.equal((await h.req('GET', '/v1/screens/scr_nope/timeline', apiKey)).statusCode, 404)
  const elsewhere = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Elsewhere', parentId: null })).json().data.id
  const pinned = await makeKey(h, apiKey, ['screen.view'], elsewhere)
  t.equal((await h.req('GET', url, pinned.secret)).statusCode, 404, 'a key pinned to another location does not see the screen')
  const blind = await makeKey(h, apiKey, ['content.view'])
  const res = await h.req('GET', url, blind.secret)
  t.equal(res.statusCode, 403)
  t.equal(res.json().error, 'forbidden')
})
