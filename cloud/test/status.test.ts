// Platform status (SPEC "Platform status", "Platform status objects"): GET /v1/status is
// public, always 200, computed from the StatusMonitor's measurements of the real database
// and the real embedded broker, and from incidents operators open through the CLI.
import { servicesOf } from '../src/app.js'
import t from 'tap'
import { build, type Harness } from './helpers.js'
import { SqliteDatabase } from '../src/platform/db/SqliteDatabase.js'
import { STALE_AFTER_MS } from '../src/domains/status/StatusService.js'

const HOUR = 3600_000
const DAY = 86_400_000

async function status(h: Harness, token: string | null = null) {
  const res = await h.req('GET', '/v1/status', token)
  if (res.statusCode !== 200) throw new Error(`GET /v1/status: ${res.statusCode} ${res.body}`)
  return res.json().data
}

const isoDay = (d: Date) => d.toISOString().slice(0, 10)

t.test('before any measurement: unknown, stale, no computedAt, 90 days ending today (UTC)', async (t) => {
  const h = await build(t)
  // Late in the UTC day, so a local-time calendar would show the wrong "today" in many zones.
  h.clock.set('2026-06-01T23:59:30.000Z')
  const res = await h.req('GET', '/v1/status', null)
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const s = res.json().data
  t.equal(s.state, 'unknown')
  t.equal(s.stale, true)
  t.equal(s.computedAt, null)
  t.equal(s.latency, null)
  t.same(s.incidents, [])
  t.same(s.recent, [])
  t.equal(s.days.length, 90)
  t.equal(s.days.at(-1).date, '2026-06-01')
  t.equal(s.days[0].date, isoDay(new Date(Date.parse('2026-06-01T00:00:00Z') - 89 * DAY)))
  for (let i = 0; i < s.days.length; i++) {
    const d = s.days[i]
    t.same(Object.keys(d).sort(), ['date', 'state'])
    t.match(d.date, /^\d{4}-\d{2}-\d{2}$/)
    t.match(d.state, /^(operational|degraded|outage)$/)
    if (i > 0) t.equal(Date.parse(d.date) - Date.parse(s.days[i - 1].date), DAY, 'consecutive days, oldest first')
  }

  // one minute later it is the next UTC day
  h.clock.advance(60_000)
  const next = await status(h)
  t.equal(next.days.length, 90)
  t.equal(next.days.at(-1).date, '2026-06-02')
})

t.test('a real measurement makes it operational; older than 3 h it goes unknown and stale', async (t) => {
  const h = await build(t)
  const measuredAt = h.clock.now().toISOString()
  await h.app.workers.status.runOnce()
  const s = await status(h)
  t.equal(s.state, 'operational')
  t.equal(s.stale, false)
  t.equal(s.computedAt, measuredAt)
  t.type(s.latency.databaseMs, 'number')
  t.type(s.latency.brokerMs, 'number')
  t.ok(s.latency.databaseMs >= 0 && s.latency.brokerMs >= 0)
  t.equal(s.days.at(-1).state, 'operational')

  // exactly three hours old: still fresh
  h.clock.advance(STALE_AFTER_MS)
  t.equal(STALE_AFTER_MS, 3 * HOUR)
  const edge = await status(h)
  t.equal(edge.state, 'operational')
  t.equal(edge.stale, false)

  h.clock.advance(1)
  const old = await status(h)
  t.equal(old.state, 'unknown')
  t.equal(old.stale, true)
  t.equal(old.computedAt, measuredAt, 'computedAt still tells when the last measurement was')

  // A declared incident still shows while the measurement is stale.
  const inc = await servicesOf(h.app).status.openIncident({ title: 'Region down', impact: 'outage' })
  const declared = await status(h)
  t.equal(declared.state, 'outage')
  t.equal(declared.stale, true)
  await servicesOf(h.app).status.updateIncident(inc.id, { status: 'resolved', message: 'ok' })
  t.equal((await status(h)).state, 'unknown')

  // a new measurement brings it back
  await h.app.workers.status.runOnce()
  const again = await status(h)
  t.equal(again.state, 'operational')
  t.equal(again.stale, false)
  t.equal(again.computedAt, h.clock.now().toISOString())
})

t.test('incidents: open ones in `incidents`, resolved ones in `recent`, updates oldest first', async (t) => {
  const h = await build(t)
  await h.app.workers.status.runOnce()
  const svc = servicesOf(h.app).status

  const opened = await svc.openIncident({ title: 'Slow screenshots', impact: 'degraded', message: 'Looking into it.' })
  t.match(opened.id, /^\S+$/)
  let s = await status(h)
  t.equal(s.state, 'degraded', 'an open degraded incident degrades the state')
  t.equal(s.incidents.length, 1)
  t.same(s.recent, [])
  const inc = s.incidents[0]
  t.equal(inc.id, opened.id)
  t.equal(inc.title, 'Slow screenshots')
  t.equal(inc.status, 'investigating')
  t.equal(inc.impact, 'degraded')
  t.equal(inc.startedAt, '2026-06-01T12:00:00.000Z')
  t.equal(inc.resolvedAt, null)
  t.equal(inc.screensPlaying, null)
  t.same(inc.updates, [{ at: '2026-06-01T12:00:00.000Z', status: 'investigating', message: 'Looking into it.' }])

  h.clock.advance(10 * 60_000)
  await svc.updateIncident(opened.id, { status: 'identified', message: 'A slow disk.', screensPlaying: true })
  h.clock.advance(10 * 60_000)
  await svc.updateIncident(opened.id, { status: 'monitoring', message: 'Disk replaced.' })
  s = await status(h)
  t.equal(s.incidents[0].status, 'monitoring')
  t.equal(s.incidents[0].screensPlaying, true, 'screensPlaying kept when a later update does not state it')
  t.same(
    s.incidents[0].updates.map((u: { status: string }) => u.status),
    ['investigating', 'identified', 'monitoring'],
  )

  h.clock.advance(10 * 60_000)
  const resolved = await svc.updateIncident(opened.id, { status: 'resolved', message: 'All good.' })
  t.equal(resolved.resolvedAt, '2026-06-01T12:30:00.000Z')
  s = await status(h)
  t.same(s.incidents, [])
  t.equal(s.state, 'operational', 'a resolved incident no longer affects the state')
  t.equal(s.recent.length, 1)
  const r = s.recent[0]
  t.equal(r.id, opened.id)
  t.equal(r.status, 'resolved')
  t.equal(r.resolvedAt, '2026-06-01T12:30:00.000Z')
  t.equal(r.screensPlaying, true)
  t.same(r.updates, [
    { at: '2026-06-01T12:00:00.000Z', status: 'investigating', message: 'Looking into it.' },
    { at: '2026-06-01T12:10:00.000Z', status: 'identified', message: 'A slow disk.' },
    { at: '2026-06-01T12:20:00.000Z', status: 'monitoring', message: 'Disk replaced.' },
    { at: '2026-06-01T12:30:00.000Z', status: 'resolved', message: 'All good.' },
  ])
  t.equal(s.days.at(-1).state, 'degraded', 'the day the incident ran shows it')

  // a resolved incident cannot be updated again
  await t.rejects(svc.updateIncident(opened.id, { status: 'monitoring', message: 'again' }), { code: 'validation_error' })
  // screensPlaying false is kept as false, not null
  const quiet = await svc.openIncident({ title: 'Screens dark', impact: 'none', screensPlaying: false })
  t.equal(quiet.screensPlaying, false)
  t.equal(quiet.updates[0]!.message, 'Screens dark', 'the first update defaults to the title')
  s = await status(h)
  t.equal(s.state, 'operational', 'impact none does not change the state')
  t.equal(s.incidents[0].screensPlaying, false)

  // "recent" means recently: more than seven days after resolution it drops off
  h.clock.advance(8 * DAY)
  await h.app.workers.status.runOnce()
  s = await status(h)
  t.same(
    s.recent.map((i: { id: string }) => i.id),
    [],
  )
})

t.test('bad incident input is refused', async (t) => {
  const h = await build(t)
  const svc = servicesOf(h.app).status
  await t.rejects(svc.openIncident({ title: ' ', impact: 'degraded' }), { code: 'validation_error' })
  await t.rejects(svc.openIncident({ title: 'x', impact: 'catastrophic' }), { code: 'validation_error' })
  await t.rejects(svc.openIncident({ title: 'x', impact: 'outage', status: 'resolved' }), { code: 'validation_error' })
  await t.rejects(svc.updateIncident('inc_nope', { status: 'resolved', message: 'x' }), { code: 'not_found' })
  const i = await svc.openIncident({ title: 'x', impact: 'outage' })
  await t.rejects(svc.updateIncident(i.id, { status: 'sleeping', message: 'x' }), { code: 'validation_error' })
  await t.rejects(svc.updateIncident(i.id, { status: 'monitoring', message: '' }), { code: 'validation_error' })
})

t.test('an open outage incident: state outage and today outage; earlier days untouched', async (t) => {
  const h = await build(t)
  await h.app.workers.status.runOnce()
  const i = await servicesOf(h.app).status.openIncident({ title: 'Broker down', impact: 'outage' })
  const s = await status(h)
  t.equal(s.state, 'outage')
  t.equal(s.days.at(-1).date, '2026-06-01')
  t.equal(s.days.at(-1).state, 'outage')
  t.equal(s.days.at(-2).state, 'operational')

  // still open two days later: every day it spans is an outage day
  h.clock.advance(2 * DAY)
  await h.app.workers.status.runOnce()
  const later = await status(h)
  t.equal(later.state, 'outage')
  t.same(
    later.days.slice(-4).map((d: { state: string }) => d.state),
    ['operational', 'outage', 'outage', 'outage'],
  )
  t.equal(later.incidents[0].id, i.id)
})

t.test('?format=text answers text/plain with the state', async (t) => {
  const h = await build(t)
  const before = await h.req('GET', '/v1/status?format=text', null)
  t.equal(before.statusCode, 200)
  t.match(before.headers['content-type'], /^text\/plain/)
  t.match(before.body, /^state: unknown/m)

  await h.app.workers.status.runOnce()
  await servicesOf(h.app).status.openIncident({ title: 'Uploads slow', impact: 'degraded' })
  const res = await h.req('GET', '/v1/status?format=text', null)
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain/)
  t.match(res.body, /^state: degraded$/m)
  t.match(res.body, /Uploads slow/)
  t.notMatch(res.body, /^\{/, 'not JSON')
})

t.test('no credential needed; a bad or foreign credential is ignored; always 200', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  for (const token of [null, 'garbage', 'ak_us_live_00000000000000000000000000000000', apiKey]) {
    const res = await h.req('GET', '/v1/status', token)
    t.equal(res.statusCode, 200, `token ${token}`)
    t.equal(res.json().data.state, 'unknown')
    const dep = await h.req('GET', '/v1/status/deprecations', token)
    t.equal(dep.statusCode, 200)
  }
  const malformed = await h.app.inject({ method: 'GET', url: '/v1/status', headers: { authorization: 'Basic Zm9vOmJhcg==' } })
  t.equal(malformed.statusCode, 200)
})

t.test('a bad format value answers 422 in the envelope', async (t) => {
  const h = await build(t)
  for (const q of ['format=json', 'format=TEXT', 'format=', 'format=text&format=text']) {
    const res = await h.req('GET', `/v1/status?${q}`, null)
    t.equal(res.statusCode, 422, q)
    t.equal(res.json().error, 'validation_error', q)
    t.type(res.json().message, 'string')
    t.match(res.json().message, /format/, q)
  }
})

t.test('the broker probe fails: outage, still 200', async (t) => {
  const h = await build(t)
  await servicesOf(h.app).broker.close()
  await h.app.workers.status.runOnce()
  const res = await h.req('GET', '/v1/status', null)
  t.equal(res.statusCode, 200)
  const s = res.json().data
  t.equal(s.state, 'outage')
  t.equal(s.stale, false)
  t.equal(s.latency.brokerMs, null)
  t.type(s.latency.databaseMs, 'number')
  t.equal(s.days.at(-1).state, 'outage')
  const text = await h.req('GET', '/v1/status?format=text', null)
  t.equal(text.statusCode, 200)
  t.match(text.body, /^state: outage$/m)
})

t.test('the database is gone: still 200, reporting an outage', async (t) => {
  const db = await SqliteDatabase.open(':memory:', 1000)
  const h = await build(t, {}, { db })
  await h.app.workers.status.runOnce()
  t.equal((await status(h)).state, 'operational')
  await db.close()
  await h.app.workers.status.runOnce().catch(() => undefined)
  const res = await h.req('GET', '/v1/status', null)
  t.equal(res.statusCode, 200)
  const s = res.json().data
  t.equal(s.state, 'outage')
  t.equal(s.days.length, 90)
  t.equal(s.days.at(-1).state, 'outage')
  const text = await h.req('GET', '/v1/status?format=text', null)
  t.equal(text.statusCode, 200)
  t.match(text.body, /^state: outage$/m)
})

t.test('a database that is only busy reads as degraded, with the last known incidents', async (t) => {
  const { DatabaseBusyError } = await import('../src/platform/errors.js')
  const h = await build(t)
  await h.app.workers.status.runOnce()
  await servicesOf(h.app).status.openIncident({ title: 'Known issue', impact: 'none' })
  await status(h)
  const v = servicesOf(h.app).status.unavailableView(new DatabaseBusyError(new Error('SQLITE_BUSY')))
  t.equal(v.state, 'degraded')
  t.equal(v.stale, false)
  t.equal(v.incidents.length, 1)
  t.equal(v.days.length, 90)
  t.equal(v.days.at(-1)!.state, 'degraded')
})
