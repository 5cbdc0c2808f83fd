// Interval arithmetic of the availability report: sorted, disjoint [start, end) spans in
// epoch milliseconds. Everything a report adds up is a length of one of these sets or of an
// intersection of two, so one screen's year is a few linear passes over its intervals.
import { hoursAsSchedule, type OperatingHours, scheduleEvaluator } from '@svc/shared/schedule/index'

/** [start, end) in epoch ms, start < end. */
export type Span = readonly [number, number]

/** The spans clipped to [from, to), sorted and merged (touching spans join). */
export function normalize(spans: readonly Span[], from: number, to: number): Span[] {
  const clipped: [number, number][] = []
  for (const [s, e] of spans) {
    const a = Math.max(s, from)
    const b = Math.min(e, to)
    if (a < b) clipped.push([a, b])
  }
  clipped.sort((x, y) => x[0] - y[0])
  const out: [number, number][] = []
  for (const c of clipped) {
    const last = out[out.length - 1]
    if (last && c[0] <= last[1]) last[1] = Math.max(last[1], c[1])
    else out.push([c[0], c[1]])
  }
  return out
}

/** Total length of normalized spans. */
export function length(spans: readonly Span[]): number {
  let n = 0
  for (const [s, e] of spans) n += e - s
  return n
}

/** The intersection of two normalized span lists (normalized). */
export function intersect(a: readonly Span[], b: readonly Span[]): Span[] {
  const out: Span[] = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const s = Math.max(a[i]![0], b[j]![0])
    const e = Math.min(a[i]![1], b[j]![1])
    if (s < e) out.push([s, e])
    if (a[i]![1] < b[j]![1]) i++
    else j++
  }
  return out
}

/** The gaps of normalized spans inside [from, to): what is not covered, as spans. */
export function gaps(spans: readonly Span[], from: number, to: number): Span[] {
  const out: Span[] = []
  let at = from
  for (const [s, e] of spans) {
    if (s > at) out.push([at, s])
    at = Math.max(at, e)
  }
  if (at < to) out.push([at, to])
  return out
}

/**
 * When operating hours want the panel on inside [from, to), in `timeZone` (the schedule
 * evaluator's reading of them: the same as the player's and the desired state's).
 */
export function hoursOn(hours: OperatingHours, timeZone: string, from: number, to: number): Span[] {
  if (to <= from) return []
  const evaluate = scheduleEvaluator(hoursAsSchedule(hours), timeZone, from, to)
  const out: Span[] = []
  let at = from
  // Each step moves to the schedule's next change (at least every 8 days: a re-check point).
  for (let steps = 0; at < to && steps < 100_000; steps++) {
    const r = evaluate(at)
    const next = r.nextChangeAt ? Math.min(Math.max(r.nextChangeAt.getTime(), at + 1), to) : to
    if (r.content?.id === 'on') {
      const last = out[out.length - 1] as [number, number] | undefined
      if (last && last[1] === at) last[1] = next
      else out.push([at, next])
    }
    at = next
  }
  return out
}

/** What the report says of one screen's window (milliseconds). */
export interface ScreenFigures {
  windowMs: number
  onlineMs: number
  outages: number
  longestOutageMs: number
  scheduledMs: number
  displayMs: number
}

/**
 * One screen's figures over [from, to): online = the presence spans; an outage = each
 * stretch of the window not online; scheduled = the operating hours' on-spans (null hours:
 * the whole window); display = online ∩ showing ∩ scheduled.
 */
export function figures(online: readonly Span[], showing: readonly Span[], scheduled: readonly Span[] | null, from: number, to: number): ScreenFigures {
  if (to <= from) return { windowMs: 0, onlineMs: 0, outages: 0, longestOutageMs: 0, scheduledMs: 0, displayMs: 0 }
  const on = normalize(online, from, to)
  const holes = gaps(on, from, to)
  let longest = 0
  for (const [s, e] of holes) longest = Math.max(longest, e - s)
  const sched = scheduled === null ? [[from, to] as Span] : normalize(scheduled, from, to)
  const shown = intersect(intersect(on, normalize(showing, from, to)), sched)
  return { windowMs: to - from, onlineMs: length(on), outages: holes.length, longestOutageMs: longest, scheduledMs: length(sched), displayMs: length(shown) }
}
