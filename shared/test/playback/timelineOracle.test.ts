import t from 'tap'
import type { DesiredCast, DesiredState } from '../../src/mqtt/index.js'
import { playbackTimeline, playbackTimelineAsync } from '../../src/playback/index.js'
import { evaluateSchedule, type Schedule, type ScheduleRule, scheduleEvaluator } from '../../src/schedule/index.js'
import { evaluateScheduleOracle } from '../schedule/evaluateOracle.js'
import { playbackTimelineOracle } from './timelineOracle.js'
import { seededRandom } from '../../src/testing/random.js'

// The fast evaluation (each schedule laid out once per window) against the one it
// replaced, kept as an oracle: identical answers over seeded random schedules, in zones
// with and without DST changes in the window, with date ranges, overnight windows,
// equal priorities, disabled rules, casts and emergencies of schedules.

const ZONES = ['Europe/Berlin', 'Australia/Sydney', 'Australia/Lord_Howe', 'America/New_York', 'Asia/Kolkata', 'UTC', 'Not/AZone']
const DAY = 86_400_000
/** Around the 2027 spring-forward in Europe and the US, and the autumn fall-back in Sydney. */
const BASES = ['2027-03-10T00:00:00Z', '2027-03-26T00:00:00Z', '2027-04-01T00:00:00Z', '2027-10-29T00:00:00Z', '2027-06-15T00:00:00Z'].map(Date.parse)

function randomSchedule(r: () => number, ruleCount: number, base: number): Schedule {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const hhmm = () => (r() < 0.05 ? '24:00' : `${String(Math.floor(r() * 24)).padStart(2, '0')}:${pick(['00', '15', '30', '45', '07'])}`)
  const date = (offsetDays: number) => new Date(base + offsetDays * DAY).toISOString().slice(0, 10)
  const rules: ScheduleRule[] = Array.from({ length: ruleCount }, (_, i) => {
    const rule: ScheduleRule = { id: `r${i}`, priority: Math.floor(r() * 4), content: { kind: 'media', id: `med_${Math.floor(r() * 6)}` } }
    if (r() < 0.85) rule.start = hhmm().replace('24:00', '23:00')
    if (r() < 0.85) rule.end = hhmm()
    if (r() < 0.4) rule.days = [...new Set(Array.from({ length: 1 + Math.floor(r() * 3) }, () => Math.floor(r() * 7)))] as ScheduleRule['days']
    if (r() < 0.2) rule.dateFrom = date(Math.floor(r() * 30) - 5)
    if (r() < 0.2) rule.dateTo = date(Math.floor(r() * 40) - 5)
    if (r() < 0.08) rule.enabled = false
    return rule
  })
  const schedule: Schedule = { rules, fallback: r() < 0.5 ? { kind: 'media', id: 'med_fb' } : null }
  if (r() < 0.3) schedule.timezone = pick(ZONES)
  return schedule
}

function randomState(r: () => number, base: number): DesiredState {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const schedule = randomSchedule(r, Math.floor(r() * 25), base)
  const casts: DesiredCast[] = Array.from({ length: Math.floor(r() * 3) }, (_, i) => ({
    id: `cst_${i}`,
    contentKind: r() < 0.4 ? 'schedule' : 'media',
    contentId: `c${i}`,
    content: { name: `Cast content ${i}`, schedule: randomSchedule(r, Math.floor(r() * 4), base) },
    triggeredAt: new Date(base - Math.floor(r() * 1440) * 60_000).toISOString(),
    // Some expire at odd milliseconds, a few within a second of a rule's edge.
    expiresAt: r() < 0.3 ? null : new Date(base + Math.floor(r() * 4 * 1440) * 60_000 + (r() < 0.3 ? Math.floor(r() * 1500) : 0)).toISOString(),
  }))
  return {
    version: 1,
    screenId: 'scr_1',
    timezone: pick(ZONES),
    assignment: r() < 0.8 ? { contentKind: 'schedule', contentId: 'sch_1', content: { name: 'Week' } } : { contentKind: 'media', contentId: 'med_a' },
    schedule,
    library: Array.from({ length: 6 }, (_, i) => ({ kind: 'media' as const, id: `med_${i}`, content: { name: `Media ${i}` } })),
    casts,
    emergency:
      r() < 0.15
        ? {
            id: 'emg_1',
            contentKind: r() < 0.5 ? 'schedule' : 'media',
            contentId: 'e1',
            content: { schedule: randomSchedule(r, 2, base) },
            startedAt: new Date(base).toISOString(),
          }
        : null,
    panel: null,
    generatedAt: new Date(base).toISOString(),
  }
}

t.test('over 150 seeded schedules, the evaluator laid out for a window answers exactly as the oracle, at every edge and in between', async (t) => {
  let compared = 0
  for (let seed = 1; seed <= 150; seed++) {
    const r = seededRandom(seed)
    const base = BASES[seed % BASES.length]! + Math.floor(r() * 1440) * 60_000
    const schedule = randomSchedule(r, Math.floor(r() * 30), base)
    const zone = ZONES[seed % ZONES.length]!
    const to = base + Math.floor(1 + r() * 10) * DAY
    const fast = scheduleEvaluator(schedule, zone, base, to)
    // Instants: whole minutes, odd milliseconds, and the oracle's own change points.
    const instants: number[] = []
    for (let i = 0; i < 20; i++) instants.push(base + Math.floor(r() * (to - base)))
    for (let at = base, n = 0; at <= to && n < 60; n++) {
      instants.push(at)
      const next = evaluateScheduleOracle(schedule, new Date(at), zone).nextChangeAt
      if (!next) break
      instants.push(next.getTime() - 1)
      at = next.getTime()
    }
    for (const at of instants) {
      if (at > to) continue
      const want = evaluateScheduleOracle(schedule, new Date(at), zone)
      const got = fast(at)
      compared++
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        t.same(got, want, `seed ${seed}: at ${new Date(at).toISOString()} in ${zone}`)
        return
      }
      // evaluateSchedule (one instant) is the same evaluation.
      if (compared % 5 === 0 && JSON.stringify(evaluateSchedule(schedule, new Date(at), zone)) !== JSON.stringify(want)) {
        t.same(evaluateSchedule(schedule, new Date(at), zone), want, `seed ${seed}: evaluateSchedule at ${new Date(at).toISOString()}`)
        return
      }
    }
  }
  t.ok(compared > 5000, `${compared} instants compared`)
})

t.test('over 300 seeded screens, the timeline equals the oracle walk, segment for segment, reasons and truncation included', async (t) => {
  let segments = 0
  for (let seed = 1; seed <= 300; seed++) {
    const r = seededRandom(seed * 7919)
    const from = BASES[seed % BASES.length]! + Math.floor(r() * 1440) * 60_000 + (r() < 0.2 ? Math.floor(r() * 60_000) : 0)
    const to = from + Math.floor(1 + r() * 6) * DAY
    const d = randomState(r, from)
    const options = r() < 0.1 ? { maxSegments: 1 + Math.floor(r() * 20) } : {}
    const want = playbackTimelineOracle(d, new Date(from), new Date(to), options)
    const got = playbackTimeline(d, new Date(from), new Date(to), options)
    segments += got.segments.length
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      t.same(got, want, `seed ${seed}`)
      return
    }
  }
  t.ok(segments > 1000, `the screens were not trivial (${segments} segments)`)
})

t.test('a 1,000-rule schedule over 3 days: the same timeline as the oracle, and the async walk pauses and answers the same', async (t) => {
  const r = seededRandom(1000)
  const from = Date.parse('2027-03-27T09:13:00Z')
  const d = randomState(r, from)
  d.schedule = randomSchedule(r, 1000, from)
  d.casts = []
  d.emergency = null
  const to = from + 3 * DAY
  const want = playbackTimelineOracle(d, new Date(from), new Date(to))
  const got = playbackTimeline(d, new Date(from), new Date(to))
  t.ok(got.segments.length > 200, `${got.segments.length} segments`)
  t.same(got, want)
  let pauses = 0
  const async = await playbackTimelineAsync(d, new Date(from), new Date(to), {
    pause: async () => {
      pauses++
    },
  })
  t.same(async, want)
  t.ok(pauses > 1, `paused ${pauses} times`)
})
