import t from 'tap'
import { evaluateSchedule, type DayOfWeek, type Schedule, type ScheduleRule } from '../../src/schedule/index.js'

const FALLBACK = { kind: 'playlist', id: 'pl_fallback' } as const

function rule(id: string, extra: Partial<ScheduleRule> = {}): ScheduleRule {
  return { id, content: { kind: 'media', id: `med_${id}` }, priority: 1, ...extra }
}

function sched(rules: ScheduleRule[], extra: Partial<Schedule> = {}): Schedule {
  return { rules, fallback: FALLBACK, ...extra }
}

/** Compact answer: [ruleId or 'fallback'/'none', nextChangeAt ISO or null]. */
function ev(s: Schedule, iso: string, tz: string): [string, string | null] {
  const r = evaluateSchedule(s, new Date(iso), tz)
  const who = r.ruleId ?? (r.content ? 'fallback' : 'none')
  if (r.ruleId && r.content?.id !== `med_${r.ruleId}`) throw new Error(`content ${r.content?.id} does not follow ${r.ruleId}`)
  if (!r.ruleId && r.content && r.content.id !== FALLBACK.id) throw new Error('fallback content expected')
  return [who, r.nextChangeAt ? r.nextChangeAt.toISOString() : null]
}

t.test('UTC basics: window, fallback, nextChangeAt', async (t) => {
  const s = sched([rule('day', { start: '09:00', end: '17:00' })])
  t.same(ev(s, '2026-05-05T08:59:59.999Z', 'UTC'), ['fallback', '2026-05-05T09:00:00.000Z'])
  t.same(ev(s, '2026-05-05T09:00:00.000Z', 'UTC'), ['day', '2026-05-05T17:00:00.000Z'])
  t.same(ev(s, '2026-05-05T16:59:00.000Z', 'UTC'), ['day', '2026-05-05T17:00:00.000Z'])
  t.same(ev(s, '2026-05-05T17:00:00.000Z', 'UTC'), ['fallback', '2026-05-06T09:00:00.000Z'], 'end is exclusive')
})

t.test('fallback null plays nothing; no rules never changes', async (t) => {
  const none = evaluateSchedule({ rules: [], fallback: null }, new Date('2026-01-01T00:00:00Z'), 'UTC')
  t.same(none, { content: null, ruleId: null, nextChangeAt: null })
  const only = evaluateSchedule({ rules: [], fallback: FALLBACK }, new Date('2026-01-01T00:00:00Z'), 'UTC')
  t.same(only.content, FALLBACK)
  t.equal(only.nextChangeAt, null)
  t.same(ev(sched([rule('a', { start: '10:00', end: '11:00' })], { fallback: null }), '2026-01-01T00:00:00Z', 'UTC'), ['none', '2026-01-01T10:00:00.000Z'])
})

t.test('an all-day, every-day rule never changes', async (t) => {
  t.same(ev(sched([rule('always')]), '2026-07-01T12:00:00Z', 'Europe/London'), ['always', null])
})

t.test('disabled rules are ignored', async (t) => {
  t.same(ev(sched([rule('off', { enabled: false })]), '2026-07-01T12:00:00Z', 'UTC'), ['fallback', null])
})

t.test('priorities and tie-breaks', async (t) => {
  const s = sched([rule('low', { priority: 1, start: '08:00', end: '20:00' }), rule('high', { priority: 5, start: '12:00', end: '13:00' })])
  t.same(ev(s, '2026-05-05T12:30:00Z', 'UTC'), ['high', '2026-05-05T13:00:00.000Z'])
  t.same(ev(s, '2026-05-05T11:00:00Z', 'UTC'), ['low', '2026-05-05T12:00:00.000Z'])

  const tie = sched([rule('early', { start: '08:00', end: '20:00' }), rule('late', { start: '10:00', end: '11:00' })])
  t.same(ev(tie, '2026-05-05T10:30:00Z', 'UTC'), ['late', '2026-05-05T11:00:00.000Z'], 'most recent start wins a tie')
  t.same(ev(tie, '2026-05-05T09:00:00Z', 'UTC'), ['early', '2026-05-05T10:00:00.000Z'])

  const order = sched([rule('first', { start: '10:00', end: '12:00' }), rule('second', { start: '10:00', end: '11:00' })])
  t.same(ev(order, '2026-05-05T10:30:00Z', 'UTC'), ['first', '2026-05-05T12:00:00.000Z'], 'same start: rule order wins')

  const overnightTie = sched([rule('yesterday', { start: '22:00', end: '06:00' }), rule('morning', { start: '05:00', end: '07:00' })])
  t.same(ev(overnightTie, '2026-05-05T05:30:00Z', 'UTC'), ['morning', '2026-05-05T07:00:00.000Z'])
  t.same(ev(overnightTie, '2026-05-05T04:30:00Z', 'UTC'), ['yesterday', '2026-05-05T05:00:00.000Z'])
})

t.test('nextChangeAt skips boundaries that change nothing', async (t) => {
  const s = sched([rule('high', { priority: 9, start: '08:00', end: '18:00' }), rule('low', { priority: 1, start: '09:00', end: '10:00' })])
  t.same(ev(s, '2026-05-05T08:30:00Z', 'UTC'), ['high', '2026-05-05T18:00:00.000Z'])
})

t.test('overnight windows belong to the day they start', async (t) => {
  // 2026-03-07 is a Saturday.
  const s = sched([rule('sat-night', { days: [6], start: '22:00', end: '02:00' })])
  t.same(ev(s, '2026-03-08T01:00:00Z', 'UTC'), ['sat-night', '2026-03-08T02:00:00.000Z'], 'Sunday 01:00 is Saturday night')
  t.same(ev(s, '2026-03-09T01:00:00Z', 'UTC'), ['fallback', '2026-03-14T22:00:00.000Z'], 'Monday 01:00 is not')
  t.same(ev(s, '2026-03-07T21:00:00Z', 'UTC'), ['fallback', '2026-03-07T22:00:00.000Z'])
})

t.test('overnight across month end and year end', async (t) => {
  // 2026-01-31 is a Saturday; its night runs into February.
  const month = sched([rule('jan', { dateFrom: '2026-01-31', dateTo: '2026-01-31', start: '23:00', end: '03:00' })])
  t.same(ev(month, '2026-02-01T02:59:00Z', 'UTC'), ['jan', '2026-02-01T03:00:00.000Z'])
  t.same(ev(month, '2026-02-01T23:30:00Z', 'UTC'), ['fallback', null], 'range over: the answer never changes again')

  const nye = sched([rule('nye', { dateFrom: '2026-12-31', dateTo: '2026-12-31', start: '20:00', end: '02:00' })])
  t.same(ev(nye, '2026-12-31T19:00:00Z', 'UTC'), ['fallback', '2026-12-31T20:00:00.000Z'])
  t.same(ev(nye, '2027-01-01T01:00:00Z', 'UTC'), ['nye', '2027-01-01T02:00:00.000Z'])
  t.same(ev(nye, '2027-01-01T20:30:00Z', 'UTC'), ['fallback', null])
  t.same(ev(nye, '2026-12-30T20:30:00Z', 'UTC'), ['fallback', '2026-12-31T20:00:00.000Z'], 'not before dateFrom')
})

t.test('end == start is a 24-hour window; end 24:00 runs to midnight', async (t) => {
  const s = sched([rule('full', { dateFrom: '2026-05-05', dateTo: '2026-05-05', start: '06:00', end: '06:00' })])
  t.same(ev(s, '2026-05-06T05:59:00Z', 'UTC'), ['full', '2026-05-06T06:00:00.000Z'])
  const m = sched([rule('eve', { start: '18:00', end: '24:00' })])
  t.same(ev(m, '2026-05-05T23:59:00Z', 'UTC'), ['eve', '2026-05-06T00:00:00.000Z'])
})

t.test('date ranges are inclusive local dates', async (t) => {
  const s = sched([rule('june', { dateFrom: '2026-06-01', dateTo: '2026-06-30' })])
  t.same(ev(s, '2026-05-31T23:59:59Z', 'UTC'), ['fallback', '2026-06-01T00:00:00.000Z'])
  t.same(ev(s, '2026-06-30T23:59:59Z', 'UTC'), ['june', '2026-07-01T00:00:00.000Z'])
  t.same(ev(s, '2026-07-01T00:00:00Z', 'UTC'), ['fallback', null])
  t.same(ev(s, '2026-05-01T00:00:00Z', 'UTC'), ['fallback', '2026-05-09T00:00:00.000Z'], 'beyond the horizon: re-check at its end')
})

t.test('America/New_York spring forward 2026-03-08', async (t) => {
  const tz = 'America/New_York'
  const gapStart = sched([rule('gap', { dateFrom: '2026-03-08', dateTo: '2026-03-08', start: '02:30', end: '04:00' })])
  t.same(ev(gapStart, '2026-03-08T06:59:00Z', tz), ['fallback', '2026-03-08T07:00:00.000Z'], 'starts at 03:00 EDT, right after the gap')
  t.same(ev(gapStart, '2026-03-08T07:00:00Z', tz), ['gap', '2026-03-08T08:00:00.000Z'])

  const wall = sched([rule('wall', { dateFrom: '2026-03-08', dateTo: '2026-03-08', start: '01:00', end: '04:00' })])
  t.same(ev(wall, '2026-03-08T06:00:00Z', tz), ['wall', '2026-03-08T08:00:00.000Z'], '01:00 EST to 04:00 EDT is two real hours')

  const inside = sched([rule('inside', { start: '02:10', end: '02:50' })])
  t.same(ev(inside, '2026-03-08T06:00:00Z', tz), ['fallback', '2026-03-09T06:10:00.000Z'], 'a window wholly in the gap does not run')

  const daily = sched([rule('nine', { start: '09:00', end: '10:00' })])
  t.same(ev(daily, '2026-03-07T15:00:00Z', tz), ['fallback', '2026-03-08T13:00:00.000Z'], 'after the change 09:00 is 13:00Z')
  t.same(ev(daily, '2026-03-07T14:30:00Z', tz), ['nine', '2026-03-07T15:00:00.000Z'], 'before it 09:00 was 14:00Z')
})

t.test('America/New_York fall back 2026-11-01', async (t) => {
  const tz = 'America/New_York'
  const amb = sched([rule('amb', { dateFrom: '2026-11-01', dateTo: '2026-11-01', start: '01:30', end: '03:00' })])
  t.same(ev(amb, '2026-11-01T05:29:00Z', tz), ['fallback', '2026-11-01T05:30:00.000Z'], 'starts at the first 01:30 (EDT)')
  t.same(ev(amb, '2026-11-01T06:45:00Z', tz), ['amb', '2026-11-01T08:00:00.000Z'], 'still on during the repeated hour')

  const endAmb = sched([rule('endamb', { dateFrom: '2026-11-01', dateTo: '2026-11-01', start: '00:00', end: '01:30' })])
  t.same(ev(endAmb, '2026-11-01T05:00:00Z', tz), ['endamb', '2026-11-01T05:30:00.000Z'], 'ends at the first 01:30')
  t.same(ev(endAmb, '2026-11-01T06:15:00Z', tz), ['fallback', null], 'the second 01:15 is outside')
})

t.test('overnight window across a DST change keeps wall-clock ends', async (t) => {
  const tz = 'America/New_York'
  // Saturday 2026-03-07 22:00 EST → Sunday 06:00 EDT: 7 real hours.
  const s = sched([rule('night', { days: [6], start: '22:00', end: '06:00' })])
  t.same(ev(s, '2026-03-08T02:59:00Z', tz), ['fallback', '2026-03-08T03:00:00.000Z'])
  t.same(ev(s, '2026-03-08T09:59:00Z', tz), ['night', '2026-03-08T10:00:00.000Z'])
  // Saturday 2026-10-31 22:00 EDT → Sunday 06:00 EST: 9 real hours.
  t.same(ev(s, '2026-11-01T02:00:00Z', tz), ['night', '2026-11-01T11:00:00.000Z'])
})

t.test('Europe/London', async (t) => {
  const tz = 'Europe/London'
  const gap = sched([rule('gap', { start: '01:15', end: '01:45' })])
  t.same(ev(gap, '2026-03-29T00:30:00Z', tz), ['fallback', '2026-03-30T00:15:00.000Z'], '01:15–01:45 does not exist on 2026-03-29')
  t.same(ev(gap, '2026-03-28T01:20:00Z', tz), ['gap', '2026-03-28T01:45:00.000Z'], 'GMT the day before')

  const office = sched([rule('office', { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' })])
  t.same(ev(office, '2026-03-27T08:30:00Z', tz), ['fallback', '2026-03-27T09:00:00.000Z'], 'Friday before: GMT')
  t.same(ev(office, '2026-03-30T08:30:00Z', tz), ['office', '2026-03-30T16:00:00.000Z'], 'Monday after: BST')
  t.same(ev(office, '2026-03-27T17:00:00Z', tz), ['fallback', '2026-03-30T08:00:00.000Z'], 'over a weekend that changes clocks')

  const back = sched([rule('back', { dateFrom: '2026-10-25', dateTo: '2026-10-25', start: '01:00', end: '02:00' })])
  t.same(ev(back, '2026-10-25T00:00:00Z', tz), ['back', '2026-10-25T02:00:00.000Z'], '01:00 BST to 02:00 GMT is two real hours')
})

t.test('Australia/Sydney (southern hemisphere)', async (t) => {
  const tz = 'Australia/Sydney'
  const nine = sched([rule('nine', { start: '09:00', end: '10:00' })])
  t.same(ev(nine, '2026-01-14T21:30:00Z', tz), ['fallback', '2026-01-14T22:00:00.000Z'], 'January is summer: +11')
  t.same(ev(nine, '2026-07-14T22:30:00Z', tz), ['fallback', '2026-07-14T23:00:00.000Z'], 'July is winter: +10')

  // 2026-04-05 03:00 AEDT → 02:00 AEST: 02:30 happens twice.
  const back = sched([rule('back', { dateFrom: '2026-04-05', dateTo: '2026-04-05', start: '02:30', end: '03:30' })])
  t.same(ev(back, '2026-04-04T15:00:00Z', tz), ['fallback', '2026-04-04T15:30:00.000Z'], 'first 02:30 is AEDT')
  t.same(ev(back, '2026-04-04T17:00:00Z', tz), ['back', '2026-04-04T17:30:00.000Z'], 'runs to 03:30 AEST')

  // 2026-10-04 02:00 AEST → 03:00 AEDT.
  const fwd = sched([rule('fwd', { dateFrom: '2026-10-04', dateTo: '2026-10-04', start: '02:15', end: '05:00' })])
  t.same(ev(fwd, '2026-10-03T15:30:00Z', tz), ['fallback', '2026-10-03T16:00:00.000Z'], 'gap start moves to 03:00 AEDT')
  t.same(ev(fwd, '2026-10-03T17:00:00Z', tz), ['fwd', '2026-10-03T18:00:00.000Z'])
})

t.test('Asia/Kolkata half-hour offset', async (t) => {
  const tz = 'Asia/Kolkata'
  const s = sched([rule('shop', { start: '09:00', end: '17:30' })])
  t.same(ev(s, '2026-06-10T03:29:00Z', tz), ['fallback', '2026-06-10T03:30:00.000Z'])
  t.same(ev(s, '2026-06-10T11:59:00Z', tz), ['shop', '2026-06-10T12:00:00.000Z'])
  const june = sched([rule('june', { dateFrom: '2026-06-01' })])
  t.same(ev(june, '2026-05-31T18:29:00Z', tz), ['fallback', '2026-05-31T18:30:00.000Z'], 'local June 1 starts at 18:30Z')
  // days are local: Monday 00:30 IST is Sunday 19:00Z.
  const monday = sched([rule('mon', { days: [1] })])
  t.same(ev(monday, '2026-06-07T19:00:00Z', tz), ['mon', '2026-06-08T18:30:00.000Z'])
})

t.test('time zone choice: schedule zone wins, then screen zone, then UTC', async (t) => {
  const r = [rule('nine', { start: '09:00', end: '10:00' })]
  t.same(ev(sched(r, { timezone: 'Asia/Kolkata' }), '2026-06-10T03:45:00Z', 'America/New_York'), ['nine', '2026-06-10T04:30:00.000Z'])
  t.same(ev(sched(r), '2026-06-10T13:30:00Z', 'America/New_York'), ['nine', '2026-06-10T14:00:00.000Z'])
  t.same(ev(sched(r, { timezone: 'Not/AZone' }), '2026-06-10T13:30:00Z', 'America/New_York'), ['nine', '2026-06-10T14:00:00.000Z'])
  t.same(ev(sched(r), '2026-06-10T09:30:00Z', 'bogus'), ['nine', '2026-06-10T10:00:00.000Z'])
})

t.test('malformed rules are skipped, not thrown', async (t) => {
  const bad = sched([rule('bad', { start: '25:00' }), rule('ok', { start: '10:00', end: '11:00' })])
  t.same(ev(bad, '2026-06-10T10:30:00Z', 'UTC'), ['ok', '2026-06-10T11:00:00.000Z'])
  t.throws(() => evaluateSchedule(bad, new Date('nope'), 'UTC'), TypeError)
})

t.test('weekly pattern: nextChangeAt reaches a week ahead', async (t) => {
  const s = sched([rule('wed', { days: [3], start: '10:00', end: '11:00' })])
  // 2026-06-10 is a Wednesday.
  t.same(ev(s, '2026-06-10T11:00:00Z', 'UTC'), ['fallback', '2026-06-17T10:00:00.000Z'])
})

// How fast it is (for a timer loop) is a bench's figure, not a test's.
t.test('fifty rules evaluate at 48 instants across a DST change', async (t) => {
  const many = sched(
    Array.from({ length: 50 }, (_, i) =>
      rule(`r${i}`, { priority: i % 5, days: [(i % 7) as DayOfWeek], start: `${String(i % 24).padStart(2, '0')}:00`, end: '23:30' }),
    ),
  )
  const results = Array.from({ length: 48 }, (_, h) => evaluateSchedule(many, new Date(Date.UTC(2026, 2, 1, h)), 'America/New_York'))
  t.equal(results.length, 48)
  t.ok(
    results.every((r) => r !== undefined && r !== null),
    'fifty rules, 48 evaluations, each with an answer',
  )
})

t.test('America/Santiago: DST changes at midnight', async (t) => {
  const tz = 'America/Santiago'
  // 2026-09-06 00:00 -04 does not exist; the day starts at 01:00 -03 (04:00Z).
  const sep = sched([rule('sep6', { dateFrom: '2026-09-06', dateTo: '2026-09-06' })])
  t.same(ev(sep, '2026-09-06T03:59:00Z', tz), ['fallback', '2026-09-06T04:00:00.000Z'])
  t.same(ev(sep, '2026-09-06T04:00:00Z', tz), ['sep6', '2026-09-07T03:00:00.000Z'])
  // At 24:00 -03 on 2026-04-04 clocks go back to 23:00 -04: April 4 lasts 25 hours.
  const apr = sched([rule('apr4', { dateFrom: '2026-04-04', dateTo: '2026-04-04' }), rule('apr5', { dateFrom: '2026-04-05', dateTo: '2026-04-05' })])
  t.same(ev(apr, '2026-04-05T02:59:00Z', tz), ['apr4', '2026-04-05T04:00:00.000Z'])
  t.same(ev(apr, '2026-04-05T03:30:00Z', tz), ['apr4', '2026-04-05T04:00:00.000Z'], 'the repeated 23:xx is still April 4')
  t.same(ev(apr, '2026-04-05T04:00:00Z', tz), ['apr5', '2026-04-06T04:00:00.000Z'])
})
