// Operating hours: when a screen's panel should be on. Weekly windows (`on` to `off`, local
// time; `off` at or before `on` runs past midnight, as schedule rules do) and exceptions by
// date (off all day, or other hours that day). They are read with the schedule evaluator
// (evaluate.ts), so their DST behaviour is the schedules': a time in a spring-forward gap
// means the first instant after it, an ambiguous one its first occurrence.
import { Type, type Static } from '@sinclair/typebox'
import { evaluateSchedule } from './evaluate.js'
import { dayOfIsoDate, minutesOfClock } from './timezone.js'
import { CLOCK_PATTERN, DATE_PATTERN, type DayOfWeek, type Schedule, type ScheduleIssue, type ScheduleRule } from './types.js'

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const
export type Weekday = (typeof WEEKDAYS)[number]

const Clock = Type.String({ pattern: CLOCK_PATTERN })
const IsoDate = Type.String({ pattern: DATE_PATTERN })

export const OperatingHoursSchema = Type.Object({
  weekly: Type.Array(
    Type.Object({
      days: Type.Array(Type.Union(WEEKDAYS.map((d) => Type.Literal(d))), { minItems: 1, maxItems: 7 }),
      on: Clock,
      off: Clock,
    }),
    { maxItems: 50 },
  ),
  exceptions: Type.Array(Type.Union([Type.Object({ date: IsoDate, off: Type.Literal(true) }), Type.Object({ date: IsoDate, on: Clock, off: Clock })]), {
    maxItems: 400,
  }),
})
export type OperatingHours = Static<typeof OperatingHoursSchema>

export interface PanelIntent {
  /** What the operating hours want at the instant. */
  power: 'on' | 'off'
  /** The next instant that changes (up to 8 days ahead, then a re-check point); null = never. */
  nextChangeAt: Date | null
}

const ON = { kind: 'media', id: 'on' } as const
const OFF = { kind: 'media', id: 'off' } as const

/**
 * The hours as a schedule whose content is `on` or `off`: weekly windows are rules; an
 * exception day is a whole-day `off` rule above them, with its own hours (if any) above that.
 */
export function hoursAsSchedule(hours: OperatingHours): Schedule {
  const rules: ScheduleRule[] = []
  hours.weekly.forEach((w, i) => {
    const days = [...new Set(w.days.map((d) => WEEKDAYS.indexOf(d)).filter((d) => d >= 0))] as DayOfWeek[]
    if (days.length) rules.push({ id: `weekly${i}`, priority: 1, days, start: w.on, end: w.off, content: { ...ON } })
  })
  hours.exceptions.forEach((e, i) => {
    // The whole day off first; the window after midnight of the day before still belongs to it.
    rules.push({ id: `exception${i}`, priority: 2, start: '00:00', end: '24:00', dateFrom: e.date, dateTo: e.date, content: { ...OFF } })
    if ('on' in e) rules.push({ id: `exception${i}on`, priority: 3, start: e.on, end: e.off, dateFrom: e.date, dateTo: e.date, content: { ...ON } })
  })
  return { rules, fallback: { ...OFF } }
}

/** Whether the panel should be on at `instant` in `timeZone`, and when that changes next. */
export function panelIntentAt(hours: OperatingHours, instant: Date, timeZone: string): PanelIntent {
  const schedule = hoursAsSchedule(hours)
  const powerOf = (r: { content: { id: string } | null }) => (r.content?.id === 'on' ? 'on' : 'off')
  const r = evaluateSchedule(schedule, instant, timeZone)
  const power = powerOf(r)
  // The schedule changes when its winning rule does; the power only when on and off swap
  // (an exception day's `off` after a weekly night's `off` is no change). Bounded: a week of
  // boundaries at most.
  let next = r.nextChangeAt
  for (let i = 0; next && i < 64; i++) {
    const later = evaluateSchedule(schedule, next, timeZone)
    if (powerOf(later) !== power) break
    next = later.nextChangeAt
  }
  return { power, nextChangeAt: next }
}

/** Every problem with `input` as operating hours, each message starting with its field. */
export function validateOperatingHours(input: unknown): ScheduleIssue[] {
  const issues: ScheduleIssue[] = []
  const add = (field: string, text: string) => issues.push({ field, message: `${field}: ${text}` })
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
  const clock = (v: unknown, field: string) => {
    if (typeof v !== 'string' || minutesOfClock(v, true) === null) add(field, `${JSON.stringify(v)} is not a time; use HH:MM from 00:00 to 24:00`)
  }
  if (!isObj(input)) return [{ field: '', message: 'operating hours must be an object with weekly and exceptions' }]
  if (!Array.isArray(input.weekly)) add('weekly', 'must be an array of {days, on, off}')
  else
    input.weekly.forEach((w: unknown, i) => {
      const at = `weekly[${i}]`
      if (!isObj(w)) return add(at, 'must be an object with days, on and off')
      if (!Array.isArray(w.days) || w.days.length === 0) add(`${at}.days`, `must be a non-empty array of ${WEEKDAYS.join(', ')}`)
      else
        w.days.forEach((d: unknown, j) => {
          if (!(WEEKDAYS as readonly unknown[]).includes(d)) add(`${at}.days[${j}]`, `${JSON.stringify(d)} is not a day; use ${WEEKDAYS.join(', ')}`)
        })
      clock(w.on, `${at}.on`)
      clock(w.off, `${at}.off`)
    })
  if (!Array.isArray(input.exceptions)) add('exceptions', 'must be an array of {date, off: true} or {date, on, off}')
  else
    input.exceptions.forEach((e: unknown, i) => {
      const at = `exceptions[${i}]`
      if (!isObj(e)) return add(at, 'must be an object')
      if (typeof e.date !== 'string' || dayOfIsoDate(e.date) === null) add(`${at}.date`, `${JSON.stringify(e.date)} is not a date; use YYYY-MM-DD`)
      if (e.off === true && e.on === undefined) return
      if (e.on === undefined) return add(at, 'must be {date, off: true} or {date, on, off}')
      clock(e.on, `${at}.on`)
      clock(e.off, `${at}.off`)
    })
  return issues
}
