// The test oracle for the schedule evaluator: evaluateSchedule as it was before it was
// built on scheduleEvaluator (every window of 11 days laid out for each instant, and the
// winner recomputed at every edge until it changes). Slow, obviously right, and kept
// only to compare the fast one against.
import type { ContentRef, Schedule, ScheduleEvaluation, ScheduleRule } from '../../src/schedule/types.js'
import { DAY_MS, MINUTE_MS, dayOfIsoDate, instantOfLocal, isValidTimeZone, localDayAt, minutesOfClock, weekdayOfDay } from '../../src/schedule/timezone.js'

const SCAN_HORIZON_MS = 8 * DAY_MS

interface CompiledRule {
  index: number
  rule: ScheduleRule
  days: ReadonlySet<number> | null
  fromDay: number | null
  toDay: number | null
  startMin: number
  /** Minutes after the anchor day's midnight; > 1440 for overnight windows. */
  endMin: number
}

interface Occurrence {
  rule: CompiledRule
  start: number
  end: number
}

/**
 * Which zone a schedule is read in. The schedule's own `timezone` wins when it
 * names a known zone (a schedule written for "09:00 in Sydney" means Sydney
 * everywhere); otherwise the screen's zone; `UTC` as the last resort so a
 * device with a bad zone setting still plays something rather than nothing.
 */
function scheduleTimeZone(schedule: Pick<Schedule, 'timezone'>, screenTimeZone: string): string {
  if (schedule.timezone !== undefined && isValidTimeZone(schedule.timezone)) return schedule.timezone
  if (isValidTimeZone(screenTimeZone)) return screenTimeZone
  return 'UTC'
}

/**
 * What `schedule` plays at `instant`.
 *
 * A rule opens a window on each local day D that passes its `days`,
 * `dateFrom`/`dateTo` filters; the window runs from D `start` to D `end`, or
 * to D+1 `end` when `end <= start` (the after-midnight part belongs to D).
 * Window ends are wall-clock times resolved through the zone (gap → first
 * instant after it; overlap → first occurrence). Among open windows the
 * highest `priority` wins, then the window that started latest, then the rule
 * listed first. Disabled or malformed rules never open a window.
 */
export function evaluateScheduleOracle(schedule: Schedule, instant: Date, screenTimeZone: string): ScheduleEvaluation {
  const now = instant.getTime()
  if (!Number.isFinite(now)) throw new TypeError('evaluateScheduleOracle: instant is not a valid Date')
  const tz = scheduleTimeZone(schedule, screenTimeZone)
  const rules = compileRules(schedule.rules)
  const fallback = schedule.fallback ?? null

  const firstDay = localDayAt(now, tz) - 2
  const lastDay = localDayAt(now + SCAN_HORIZON_MS, tz) + 1
  const occurrences: Occurrence[] = []
  for (let day = firstDay; day <= lastDay; day++) {
    for (const rule of rules) {
      const occ = occurrenceOn(rule, day, tz)
      if (occ) occurrences.push(occ)
    }
  }

  const current = winnerAt(occurrences, now)
  const horizon = now + SCAN_HORIZON_MS
  const boundaries = new Set<number>()
  for (const o of occurrences) {
    if (o.start > now && o.start <= horizon) boundaries.add(o.start)
    if (o.end > now && o.end <= horizon) boundaries.add(o.end)
  }
  let nextChangeAt: Date | null = null
  for (const b of [...boundaries].sort((a, z) => a - z)) {
    if (winnerAt(occurrences, b) !== current) {
      nextChangeAt = new Date(b)
      break
    }
  }
  if (nextChangeAt === null && dateRangeBeyond(rules, localDayAt(horizon, tz) - 2)) {
    nextChangeAt = new Date(horizon)
  }

  return current
    ? { content: copyRef(current.rule.content), ruleId: current.rule.id, nextChangeAt }
    : { content: fallback ? copyRef(fallback) : null, ruleId: null, nextChangeAt }
}

function copyRef(ref: ContentRef): ContentRef {
  return { kind: ref.kind, id: ref.id }
}

function compileRules(rules: readonly ScheduleRule[]): CompiledRule[] {
  const out: CompiledRule[] = []
  rules.forEach((rule, index) => {
    if (!rule || rule.enabled === false) return
    if (!rule.content || typeof rule.priority !== 'number' || !Number.isFinite(rule.priority)) return
    const startMin = rule.start === undefined ? 0 : minutesOfClock(rule.start)
    let endMin = rule.end === undefined ? 1440 : minutesOfClock(rule.end, true)
    if (startMin === null || endMin === null) return
    if (endMin <= startMin) endMin += 1440
    const fromDay = rule.dateFrom === undefined ? null : dayOfIsoDate(rule.dateFrom)
    const toDay = rule.dateTo === undefined ? null : dayOfIsoDate(rule.dateTo)
    if ((rule.dateFrom !== undefined && fromDay === null) || (rule.dateTo !== undefined && toDay === null)) return
    let days: Set<number> | null = null
    if (rule.days !== undefined) {
      if (!Array.isArray(rule.days)) return
      days = new Set(rule.days.filter((d) => Number.isInteger(d) && d >= 0 && d <= 6))
    }
    out.push({ index, rule, days, fromDay, toDay, startMin, endMin })
  })
  return out
}

function occurrenceOn(rule: CompiledRule, day: number, tz: string): Occurrence | null {
  if (rule.days && !rule.days.has(weekdayOfDay(day))) return null
  if (rule.fromDay !== null && day < rule.fromDay) return null
  if (rule.toDay !== null && day > rule.toDay) return null
  const midnight = day * DAY_MS
  const start = instantOfLocal(midnight + rule.startMin * MINUTE_MS, tz)
  const end = instantOfLocal(midnight + rule.endMin * MINUTE_MS, tz)
  // A window wholly inside a spring-forward gap collapses to nothing.
  if (end <= start) return null
  return { rule, start, end }
}

function winnerAt(occurrences: readonly Occurrence[], t: number): CompiledRule | null {
  let best: Occurrence | null = null
  for (const o of occurrences) {
    if (o.start > t || t >= o.end) continue
    if (
      best === null ||
      o.rule.rule.priority > best.rule.rule.priority ||
      (o.rule.rule.priority === best.rule.rule.priority && (o.start > best.start || (o.start === best.start && o.rule.index < best.rule.index)))
    ) {
      best = o
    }
  }
  return best ? best.rule : null
}

/**
 * Whether a date range starts or ends after `day` (a day whose windows were
 * fully scanned): only then can the answer still change past the horizon,
 * because without date ranges the rules repeat every week and 8 days cover it.
 */
function dateRangeBeyond(rules: readonly CompiledRule[], day: number): boolean {
  return rules.some((r) => (r.fromDay !== null && r.fromDay > day) || (r.toDay !== null && r.toDay > day))
}
