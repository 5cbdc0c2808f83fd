import t from 'tap'
import type { DesiredCast, DesiredState } from '../../src/mqtt/index.js'
import { decidePlayback, localIso, playbackTimeline, type PlaybackDecision } from '../../src/playback/index.js'
import type { Schedule, ScheduleRule } from '../../src/schedule/index.js'
import { seededRandom } from '../../src/testing/random.js'

function desired(extra: Partial<DesiredState> = {}): DesiredState {
  return {
    version: 1,
    screenId: 'scr_1',
    timezone: 'Europe/Berlin',
    assignment: { contentKind: 'playlist', contentId: 'pl_main', content: { name: 'Main' } },
    schedule: null,
    casts: [],
    emergency: null,
    panel: null,
    generatedAt: '2027-03-01T00:00:00.000Z',
    ...extra,
  }
}

const scheduled = (schedule: Schedule, timezone = 'Europe/Berlin', name = 'Opening hours'): DesiredState =>
  desired({
    timezone,
    assignment: { contentKind: 'schedule', contentId: 'sch_1', content: { name } },
    schedule,
    library: [
      { kind: 'playlist', id: 'pl_lunch', content: { name: 'Lunch menu' } },
      { kind: 'media', id: 'med_idle', content: { name: 'Idle loop' } },
    ],
  })

const daypart = (id: string, start: string, end: string, extra: Partial<ScheduleRule> = {}): ScheduleRule => ({
  id,
  priority: 10,
  start,
  end,
  content: { kind: 'playlist', id: 'pl_lunch' },
  ...extra,
})

const window = (from: string, to: string) => [new Date(from), new Date(to)] as const

t.test('a 09:00 daypart in Berlin starts at 08:00Z on 27 March 2027 and at 07:00Z on 28 March (spring forward)', async (t) => {
  const d = scheduled({ rules: [daypart('morning', '09:00', '12:00')], fallback: { kind: 'media', id: 'med_idle' } })
  const tl = playbackTimeline(d, ...window('2027-03-27T00:00:00Z', '2027-03-29T00:00:00Z'))
  const mornings = tl.segments.filter((s) => s.ruleId === 'morning')
  t.same(
    mornings.map((s) => [s.start, s.end, s.startLocal]),
    [
      ['2027-03-27T08:00:00.000Z', '2027-03-27T11:00:00.000Z', '2027-03-27T09:00:00+01:00'],
      ['2027-03-28T07:00:00.000Z', '2027-03-28T10:00:00.000Z', '2027-03-28T09:00:00+02:00'],
    ],
  )
  t.equal(tl.timezone, 'Europe/Berlin')
  t.equal(mornings[0]?.reason, 'Rule "morning" of schedule "Opening hours" wins from 09:00 to 12:00.')
  t.match(tl.segments[0], {
    source: 'schedule',
    ruleId: null,
    contentId: 'med_idle',
    contentName: 'Idle loop',
    scheduleId: 'sch_1',
    scheduleName: 'Opening hours',
  })
  t.equal(tl.segments[0]?.reason, 'No rule of schedule "Opening hours" is on from 01:00 to 09:00, so its fallback plays.')
})

t.test(
  'Berlin: a rule across the skipped hour is two real hours; one inside it does not run; one across the repeated hour runs from its first 02:30',
  async (t) => {
    const d = scheduled({
      rules: [daypart('across', '01:00', '04:00'), daypart('inside', '02:15', '02:45', { content: { kind: 'media', id: 'med_gap' } })],
      fallback: null,
    })
    const spring = playbackTimeline(d, ...window('2027-03-27T22:00:00Z', '2027-03-28T06:00:00Z')).segments.filter((s) => s.source !== 'none')
    t.same(
      spring.map((s) => [s.ruleId, s.start, s.end]),
      [['across', '2027-03-28T00:00:00.000Z', '2027-03-28T02:00:00.000Z']],
    )
    const fall = scheduled({ rules: [daypart('night', '02:30', '05:00')], fallback: null })
    const autumn = playbackTimeline(fall, ...window('2027-10-30T20:00:00Z', '2027-10-31T08:00:00Z')).segments.filter((s) => s.source !== 'none')
    t.same(
      autumn.map((s) => [s.ruleId, s.start, s.end, s.startLocal, s.endLocal]),
      [['night', '2027-10-31T00:30:00.000Z', '2027-10-31T04:00:00.000Z', '2027-10-31T02:30:00+02:00', '2027-10-31T05:00:00+01:00']],
    )
    const none = playbackTimeline(fall, ...window('2027-10-31T04:00:00Z', '2027-10-31T08:00:00Z')).segments[0]
    t.equal(none?.reason, 'No rule of schedule "Opening hours" is on from 05:00 to 09:00 and it has no fallback, so nothing plays.')
  },
)

t.test('Sydney (southern hemisphere): DST ends on 4 April 2027, the 09:00 daypart moves from 22:00Z to 23:00Z', async (t) => {
  const d = scheduled({ rules: [daypart('morning', '09:00', '10:00')], fallback: null }, 'Australia/Sydney')
  const s = playbackTimeline(d, ...window('2027-04-02T12:00:00Z', '2027-04-04T12:00:00Z')).segments.filter((x) => x.ruleId === 'morning')
  t.same(
    s.map((x) => [x.start, x.startLocal]),
    [
      ['2027-04-02T22:00:00.000Z', '2027-04-03T09:00:00+11:00'],
      ['2027-04-03T23:00:00.000Z', '2027-04-04T09:00:00+10:00'],
    ],
  )
})

t.test('Adelaide (a 30-minute offset, with DST): the 09:00 daypart at 22:30Z, then 23:30Z', async (t) => {
  const d = scheduled({ rules: [daypart('morning', '09:00', '10:00')], fallback: null }, 'Australia/Adelaide')
  const s = playbackTimeline(d, ...window('2027-04-02T12:00:00Z', '2027-04-04T12:00:00Z')).segments.filter((x) => x.ruleId === 'morning')
  t.same(
    s.map((x) => [x.start, x.startLocal, x.endLocal]),
    [
      ['2027-04-02T22:30:00.000Z', '2027-04-03T09:00:00+10:30', '2027-04-03T10:00:00+10:30'],
      ['2027-04-03T23:30:00.000Z', '2027-04-04T09:00:00+09:30', '2027-04-04T10:00:00+09:30'],
    ],
  )
  t.equal(localIso(Date.parse('2027-01-01T00:00:00Z'), 'Asia/Kolkata'), '2027-01-01T05:30:00+05:30')
  t.equal(localIso(Date.parse('2027-01-01T00:00:00Z'), 'America/St_Johns'), '2026-12-31T20:30:00-03:30')
})

t.test('a cast over a daypart: the reason names both and when the cast ends; overridden is the daypart', async (t) => {
  const cast: DesiredCast = {
    id: 'cst_1',
    contentKind: 'media',
    contentId: 'med_promo',
    content: { name: 'Promo' },
    triggeredAt: '2027-03-01T10:00:00Z',
    expiresAt: '2027-03-01T13:00:00Z',
  }
  const d = { ...scheduled({ rules: [daypart('lunch', '11:30', '14:00')], fallback: { kind: 'media', id: 'med_idle' } }), casts: [cast] }
  const segs = playbackTimeline(d, ...window('2027-03-01T10:00:00Z', '2027-03-01T14:00:00Z')).segments
  t.same(
    segs.map((s) => [s.source, s.start, s.end, s.overridden.map((o) => o.ruleId ?? o.contentId)]),
    [
      ['cast', '2027-03-01T10:00:00.000Z', '2027-03-01T10:30:00.000Z', ['med_idle']],
      ['cast', '2027-03-01T10:30:00.000Z', '2027-03-01T13:00:00.000Z', ['lunch']],
      ['schedule', '2027-03-01T13:00:00.000Z', '2027-03-01T14:00:00.000Z', []],
    ],
  )
  t.equal(segs[0]?.reason, 'Cast "Promo" overrides the fallback of schedule "Opening hours" until 14:00.')
  t.equal(segs[1]?.reason, 'Cast "Promo" overrides rule "lunch" of schedule "Opening hours" until 14:00.')
  t.match(segs[1], { castId: 'cst_1', contentName: 'Promo', overridden: [{ source: 'schedule', ruleId: 'lunch', contentName: 'Lunch menu' }] })
})

t.test('an emergency over a cast over an assignment, and the plain cases', async (t) => {
  const d = desired({
    timezone: 'UTC',
    casts: [{ id: 'cst_1', contentKind: 'media', contentId: 'med_c', triggeredAt: '2027-03-01T00:00:00Z', expiresAt: null }],
    emergency: { id: 'emg_1', contentKind: 'media', contentId: 'med_e', message: 'Leave now', startedAt: '2027-03-01T00:00:00Z' },
  })
  const [seg] = playbackTimeline(d, ...window('2027-03-01T10:00:00Z', '2027-03-02T10:00:00Z')).segments
  t.match(seg, {
    source: 'emergency',
    emergencyId: 'emg_1',
    start: '2027-03-01T10:00:00.000Z',
    end: '2027-03-02T10:00:00.000Z',
    reason: 'Emergency emg_1 overrides cast cst_1 until it is cleared.',
  })
  t.same(
    seg?.overridden.map((o) => o.source),
    ['cast', 'assignment'],
  )
  const plainCast = playbackTimeline({ ...d, emergency: null }, ...window('2027-03-01T10:00:00Z', '2027-03-01T11:00:00Z')).segments[0]
  t.equal(plainCast?.reason, 'Cast cst_1 overrides the assigned playlist "Main" until it is stopped.')
  t.equal(playbackTimeline(desired(), ...window('2027-03-01T10:00:00Z', '2027-03-01T11:00:00Z')).segments[0]?.reason, 'The screen is assigned playlist "Main".')
  const empty = playbackTimeline(desired({ assignment: null }), ...window('2027-03-01T10:00:00Z', '2027-03-01T11:00:00Z'))
  t.match(empty.segments, [{ source: 'none', contentId: null, reason: 'Nothing is assigned to the screen.' }])
  t.same(playbackTimeline(null, ...window('2027-03-01T10:00:00Z', '2027-03-01T11:00:00Z')).segments.length, 1)
})

t.test('a window with more segments than allowed stops early and says so', async (t) => {
  const d = scheduled({ rules: [daypart('a', '09:00', '10:00')], fallback: { kind: 'media', id: 'med_idle' } })
  const tl = playbackTimeline(d, ...window('2027-03-01T00:00:00Z', '2027-03-31T00:00:00Z'), { maxSegments: 5 })
  t.equal(tl.segments.length, 5)
  t.equal(tl.truncated, true)
  t.equal(playbackTimeline(d, ...window('2027-03-01T00:00:00Z', '2027-03-03T00:00:00Z')).truncated, false)
})

// ---- the agent's decision and the timeline agree, over seeded random states ----

const ZONES = ['Europe/Berlin', 'Australia/Sydney', 'Australia/Adelaide', 'America/New_York', 'UTC']

function randomState(r: () => number, base: number): DesiredState {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const hhmm = () => `${String(Math.floor(r() * 24)).padStart(2, '0')}:${pick(['00', '15', '30', '45'])}`
  const rules: ScheduleRule[] = Array.from({ length: Math.floor(r() * 5) }, (_, i) => ({
    id: `r${i}`,
    priority: Math.floor(r() * 3),
    start: hhmm(),
    end: hhmm(),
    ...(r() < 0.5 ? { days: [Math.floor(r() * 7)] as ScheduleRule['days'] } : {}),
    content: { kind: 'media', id: `med_r${i}` },
  }))
  const schedule: Schedule = { rules, fallback: r() < 0.5 ? { kind: 'media', id: 'med_fb' } : null }
  const casts: DesiredCast[] = Array.from({ length: Math.floor(r() * 3) }, (_, i) => ({
    id: `cst_${i}`,
    contentKind: r() < 0.3 ? 'schedule' : 'media',
    contentId: `c${i}`,
    content: { schedule: { rules: rules.slice(0, 1), fallback: null } },
    triggeredAt: new Date(base - r() * 86_400_000).toISOString(),
    expiresAt: r() < 0.3 ? null : new Date(base + r() * 4 * 86_400_000).toISOString(),
  }))
  return desired({
    timezone: pick(ZONES),
    assignment: r() < 0.7 ? { contentKind: 'schedule', contentId: 'sch_1' } : { contentKind: 'media', contentId: 'med_a' },
    schedule,
    casts,
    emergency: r() < 0.15 ? { id: 'emg_1', contentKind: 'media', contentId: 'med_e', startedAt: new Date(base).toISOString() } : null,
  })
}

const winnerOf = (d: PlaybackDecision) => [d.source, d.contentKind, d.contentId, d.castId, d.emergencyId, d.ruleId]

t.test('over 300 seeded states, 5 days each: the agent stepping from change to change plays exactly the timeline', async (t) => {
  let segments = 0
  for (let seed = 1; seed <= 300; seed++) {
    const r = seededRandom(seed)
    const from = Date.parse('2027-03-25T00:00:00Z') + Math.floor(r() * 20) * 86_400_000 + Math.floor(r() * 1440) * 60_000
    const to = from + 5 * 86_400_000
    const d = randomState(r, from)
    const tl = playbackTimeline(d, new Date(from), new Date(to))
    // The agent's way (PlaybackController): decide, sleep until nextChangeAt, decide again.
    const agent: { at: number; winner: unknown[] }[] = []
    for (let at = from; at < to; ) {
      const decision = decidePlayback(d, new Date(at))
      if (JSON.stringify(agent.at(-1)?.winner) !== JSON.stringify(winnerOf(decision))) agent.push({ at, winner: winnerOf(decision) })
      at = decision.nextChangeAt ? decision.nextChangeAt.getTime() : to
    }
    const timeline: { at: number; winner: unknown[] }[] = []
    for (const s of tl.segments) {
      const w = [s.source, s.contentKind, s.contentId, s.castId, s.emergencyId, s.ruleId]
      if (JSON.stringify(timeline.at(-1)?.winner) !== JSON.stringify(w)) timeline.push({ at: Date.parse(s.start), winner: w })
      // and inside every segment, at its start, its middle and its last second
      for (const at of [Date.parse(s.start), (Date.parse(s.start) + Date.parse(s.end)) / 2, Date.parse(s.end) - 1000]) {
        const here = winnerOf(decidePlayback(d, new Date(at)))
        if (JSON.stringify(here) !== JSON.stringify(w)) t.fail(`seed ${seed}: at ${new Date(at).toISOString()} the agent plays ${here}, the timeline says ${w}`)
      }
    }
    segments += tl.segments.length
    if (JSON.stringify(agent) !== JSON.stringify(timeline)) {
      t.same(timeline, agent, `seed ${seed}`)
      return
    }
    t.equal(tl.segments.at(-1)?.end, new Date(to).toISOString())
  }
  t.ok(segments > 600, `the states were not trivial (${segments} segments)`)
})
