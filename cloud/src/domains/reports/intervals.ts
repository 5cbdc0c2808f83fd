// Interval arithmetic of the availability report: sorted, disjoint [start, end) spans in
// epoch milliseconds. Everything a report adds up is a length of one of these sets or of an
// intersection of two, so one screen's year is a few linear passes over its intervals.
import { hoursAsSchedule, type OperatingHours, scheduleEvaluator } from '@svc/shared/schedule/index'

/** [start, end) in epoch ms, start < end. */
export type Span = readonly [number, number]

/**
 * Epoch ms of a stored instant: UTC ISO with milliseconds (`2026-05-01T07:00:00.000Z`, what
 * `toISOString` writes) read digit by digit, several times faster than Date.parse; anything
 * else goes to Date.parse. `at` is where it starts in `s`, `end` where it ends.
 */
export function isoMs(s: string, at = 0, end = s.length): number {
  if (end - at !== 24 || s.charCodeAt(at + 23) !== 90 || s.charCodeAt(at + 10) !== 84) return Date.parse(s.slice(at, end))
  for (let k = 0; k < 23; k++) {
    const c = s.charCodeAt(at + k)
    const ok = k === 4 || k === 7 ? c === 45 : k === 13 || k === 16 ? c === 58 : k === 19 ? c === 46 : k === 10 || (c >= 48 && c <= 57)
    if (!ok) return Date.parse(s.slice(at, end))
  }
  let y = two(s, at) * 100 + two(s, at + 2)
  const mo = two(s, at + 5)
  const day = two(s, at + 8)
  const h = two(s, at + 11)
  const mi = two(s, at + 14)
  const sec = two(s, at + 17)
  if (mo < 1 || mo > 12 || day < 1 || day > 31 || h > 23 || mi > 59 || sec > 59) return Date.parse(s.slice(at, end))
  // Days from 1970-01-01 of a proleptic Gregorian date (years counted from March).
  if (mo <= 2) y--
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5) + day - 1
  const days = era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468
  return days * 86_400_000 + ((h * 60 + mi) * 60 + sec) * 1000 + two(s, at + 20) * 10 + s.charCodeAt(at + 22) - 48
}

/** The two digits at `i` as a number (no closure: it runs for every instant read). */
function two(s: string, i: number): number {
  return (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48
}

/**
 * Adds the spans of a screen's stretches read as one text (`start/end,start/end…`, end empty
 * while the stretch lasts: it lasts until `now`) to `into`.
 */
export function parseSpans(text: string, now: number, into: Span[]): void {
  let at = 0
  while (at < text.length) {
    let comma = text.indexOf(',', at)
    if (comma < 0) comma = text.length
    const slash = text.indexOf('/', at)
    into.push([isoMs(text, at, slash), slash + 1 === comma ? now : isoMs(text, slash + 1, comma)])
    at = comma + 1
  }
}

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
