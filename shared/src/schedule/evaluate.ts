// The one schedule evaluator shared by cloud (previews, reporting) and agent
// (offline playback). Pure: same (schedule, instant, zone) gives same answer.
import type { ContentRef, Schedule, ScheduleEvaluation, ScheduleRule } from './types.js'
import { DAY_MS, MINUTE_MS, dayOfIsoDate, instantOfLocal, isValidTimeZone, localDayAt, minutesOfClock, offsetMsAt, weekdayOfDay } from './timezone.js'

/** How far ahead nextChangeAt looks for a boundary. */
export const SCAN_HORIZON_MS = 8 * DAY_MS

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
export function scheduleTimeZone(schedule: Pick<Schedule, 'timezone'>, screenTimeZone: string): string {
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
export function evaluateSchedule(schedule: Schedule, instant: Date, screenTimeZone: string): ScheduleEvaluation {
  const now = instant.getTime()
  if (!Number.isFinite(now)) throw new TypeError('evaluateSchedule: instant is not a valid Date')
  return scheduleEvaluator(schedule, screenTimeZone, now, now)(now)
}

/** What a schedule plays at an instant (epoch ms) of the window it was built for. */
export type ScheduleEvaluator = (instantMs: number) => ScheduleEvaluation

/**
 * evaluateSchedule for every instant of [fromMs, toMs] at once: the schedule's windows
 * from two local days before `fromMs` to a day after the scan horizon past `toMs` are
 * laid out once, the winner of every stretch between two consecutive window edges is
 * found once (best window first, each stretch taken by the first that covers it), and
 * each answer is then a binary search. Building costs O(W log W) for W windows (rules ×
 * days); an answer O(log W). Outside the window it answers as evaluateSchedule does.
 */
export function scheduleEvaluator(schedule: Schedule, screenTimeZone: string, fromMs: number, toMs: number): ScheduleEvaluator {
  if (!Number.isFinite(fromMs) || !Number.isFinite(toMs) || toMs < fromMs) throw new TypeError('scheduleEvaluator: bad window')
  const tz = scheduleTimeZone(schedule, screenTimeZone)
  const rules = compileRules(schedule.rules)
  const fallback = schedule.fallback ?? null
  const firstDay = localDayAt(fromMs, tz) - 2
  const lastDay = localDayAt(toMs + SCAN_HORIZON_MS, tz) + 1
  const resolve = localResolver(tz, firstDay, lastDay)
  const occurrences: Occurrence[] = []
  for (let day = firstDay; day <= lastDay; day++) {
    for (const rule of rules) {
      const occ = occurrenceOn(rule, day, resolve)
      if (occ) occurrences.push(occ)
    }
  }
  // Every window edge, in order; stretch i runs from edges[i] to edges[i + 1].
  const all = new Float64Array(occurrences.length * 2)
  occurrences.forEach((o, i) => {
    all[2 * i] = o.start
    all[2 * i + 1] = o.end
  })
  all.sort()
  let n = 0
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[n++] = all[i]!
  const edges = all.subarray(0, n)
  const indexOf = (ms: number) => lastAtOrBefore(edges, ms)
  // The winner of each stretch (a rule's position, -1 for none): the best window first
  // takes every stretch it covers that no better one took ("next free" by path halving).
  const winner = new Int32Array(n).fill(-1)
  const free = new Int32Array(n + 1)
  for (let i = 0; i <= n; i++) free[i] = i
  const nextFree = (i: number) => {
    while (free[i] !== i) {
      free[i] = free[free[i]!]!
      i = free[i]!
    }
    return i
  }
  occurrences.sort((a, b) => b.rule.rule.priority - a.rule.rule.priority || b.start - a.start || a.rule.index - b.rule.index)
  for (const o of occurrences) {
    const last = indexOf(o.end)
    for (let i = nextFree(indexOf(o.start)); i < last; i = nextFree(i + 1)) {
      winner[i] = o.rule.index
      free[i] = i + 1
    }
  }
  // The first later stretch whose winner differs (n for none).
  const change = new Int32Array(n)
  for (let i = n - 1; i >= 0; i--) change[i] = i === n - 1 ? n : winner[i + 1] !== winner[i] ? i + 1 : change[i + 1]!
  let firstOn = 0
  while (firstOn < n && winner[firstOn] === -1) firstOn++
  const byIndex = new Map(rules.map((r) => [r.index, r]))
  const dated = rules.some((r) => r.fromDay !== null || r.toDay !== null)

  return (now) => {
    if (!(now >= fromMs && now <= toMs)) return scheduleEvaluator(schedule, screenTimeZone, now, now)(now)
    const at = indexOf(now)
    const current = at >= 0 ? winner[at]! : -1
    const next = at >= 0 ? change[at]! : firstOn
    const horizon = now + SCAN_HORIZON_MS
    let nextChangeAt: Date | null = null
    if (next < n && edges[next]! <= horizon) nextChangeAt = new Date(edges[next]!)
    else if (dated && dateRangeBeyond(rules, localDayAt(horizon, tz) - 2)) nextChangeAt = new Date(horizon)
    const rule = current >= 0 ? byIndex.get(current)! : null
    return rule
      ? { content: copyRef(rule.rule.content), ruleId: rule.rule.id, nextChangeAt }
      : { content: fallback ? copyRef(fallback) : null, ruleId: null, nextChangeAt }
  }
}

/** The index of the last value of sorted `xs` at or before `v`; -1 when all are after it. */
function lastAtOrBefore(xs: Float64Array, v: number): number {
  let lo = 0
  let hi = xs.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (xs[mid]! <= v) lo = mid + 1
    else hi = mid
  }
  return lo - 1
}

/**
 * instantOfLocal for the wall-clock times of local days firstDay…lastDay (a window's
 * ends reach into the next day). Where the zone's offset is the same from the day
 * before to three days after (no change near it), every time of that day is simply
 * shifted by it, which is what instantOfLocal answers there; days near a change ask it.
 */
function localResolver(tz: string, firstDay: number, lastDay: number): (localMs: number, day: number) => number {
  const offsets: number[] = []
  for (let d = firstDay - 1; d <= lastDay + 3; d++) offsets.push(offsetMsAt(d * DAY_MS, tz))
  const steady = (day: number): number | null => {
    const at = day - firstDay // offsets[at] is day - 1
    const off = offsets[at]
    if (off === undefined) return null
    for (let k = at + 1; k <= at + 4; k++) if (offsets[k] !== off) return null
    return off
  }
  const perDay = new Map<number, number | null>()
  return (localMs, day) => {
    let off = perDay.get(day)
    if (off === undefined) perDay.set(day, (off = steady(day)))
    return off === null ? instantOfLocal(localMs, tz) : localMs - off
  }
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

function occurrenceOn(rule: CompiledRule, day: number, resolve: (localMs: number, day: number) => number): Occurrence | null {
  if (rule.days && !rule.days.has(weekdayOfDay(day))) return null
  if (rule.fromDay !== null && day < rule.fromDay) return null
  if (rule.toDay !== null && day > rule.toDay) return null
  const midnight = day * DAY_MS
  const start = resolve(midnight + rule.startMin * MINUTE_MS, day)
  const end = resolve(midnight + rule.endMin * MINUTE_MS, day)
  // A window wholly inside a spring-forward gap collapses to nothing.
  if (end <= start) return null
  return { rule, start, end }
}

/**
 * Whether a date range starts or ends after `day` (a day whose windows were
 * fully scanned): only then can the answer still change past the horizon,
 * because without date ranges the rules repeat every week and 8 days cover it.
 */
function dateRangeBeyond(rules: readonly CompiledRule[], day: number): boolean {
  return rules.some((r) => (r.fromDay !== null && r.fromDay > day) || (r.toDay !== null && r.toDay > day))
}
