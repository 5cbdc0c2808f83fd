// What a screen will play over a window, and why: the decision function the agent plays
// by (decide.ts), walked from one change to the next. At every instant of a segment the
// winner is exactly what decidePlayback answers there; the segment also names what the
// winner overrides (the layers below it that would play) and says why in one sentence.
// Each schedule is laid out once for the window (scheduleEvaluator), so a step costs a
// binary search per schedule and the walk is proportional to the segments it answers.
import type { ContentKind, DesiredState, PlayingSource } from '../mqtt/index.js'
import { isValidTimeZone, localMsAt, type Schedule, type ScheduleEvaluator, scheduleEvaluator } from '../schedule/index.js'
import { type EvaluateSchedule, type PlaybackLayer, playbackLayers } from './decide.js'

/** What one layer plays: the winner of a segment, or one it overrides. */
export interface TimelineEntry {
  source: PlayingSource
  contentKind: ContentKind | null
  contentId: string | null
  contentName: string | null
  castId: string | null
  emergencyId: string | null
  /** The schedule that chose the content (the assignment's, or a takeover's), else null. */
  scheduleId: string | null
  scheduleName: string | null
  /** The schedule rule that chose it; null for a schedule's fallback and everything else. */
  ruleId: string | null
}

export interface TimelineSegment extends TimelineEntry {
  /** UTC instants; `end` is exclusive. */
  start: string
  end: string
  /** The same instants on the screen's wall clock, with its UTC offset then. */
  startLocal: string
  endLocal: string
  /** One sentence: why the winner plays. */
  reason: string
  /** What would play without the winner, highest layer first. */
  overridden: TimelineEntry[]
}

export interface Timeline {
  /** The zone the local times are in (the screen's; UTC when it names no known zone). */
  timezone: string
  segments: TimelineSegment[]
  /** True when the window held more than `maxSegments` segments and the list stops early. */
  truncated: boolean
}

export interface TimelineOptions {
  /** Most segments answered (default 5000). */
  maxSegments?: number
}

export interface TimelineAsyncOptions extends TimelineOptions {
  /** Awaited between slices of the walk (e.g. `setImmediate`), so a long walk lets other work run. */
  pause: () => Promise<void>
}

/** Steps of the walk (or segments described) between two pauses. */
const SLICE = 200

const NONE: TimelineEntry = {
  source: 'none',
  contentKind: null,
  contentId: null,
  contentName: null,
  castId: null,
  emergencyId: null,
  scheduleId: null,
  scheduleName: null,
  ruleId: null,
}

/** The name the desired state carries for the schedule a layer evaluated. */
function scheduleNameOf(desired: DesiredState, layer: PlaybackLayer): string | null {
  if (!layer.scheduleId) return null
  if (layer.source === 'schedule') return desired.assignment?.content?.name ?? null
  if (layer.source === 'emergency') return desired.emergency?.content?.name ?? null
  return desired.casts.find((c) => c.id === layer.castId)?.content?.name ?? null
}

function entryOf(desired: DesiredState, layer: PlaybackLayer): TimelineEntry {
  const c = layer.chosen
  return {
    source: c ? layer.source : 'none',
    contentKind: c?.contentKind ?? null,
    contentId: c?.contentId ?? null,
    contentName: c?.content?.name ?? null,
    castId: layer.castId,
    emergencyId: layer.emergencyId,
    scheduleId: layer.scheduleId,
    scheduleName: scheduleNameOf(desired, layer),
    ruleId: c?.ruleId ?? null,
  }
}

interface Open {
  start: number
  end: number
  winner: TimelineEntry
  overridden: TimelineEntry[]
  /** The layer that won (or, when nothing plays, the schedule that chose nothing). */
  layer: PlaybackLayer | null
  key: string
}

/**
 * The segments of `desired` from `from` to `to` (exclusive). Boundaries are every
 * instant any layer could change (a schedule window opening or closing, a cast
 * expiring), so the winner and what it overrides are constant inside a segment;
 * neighbours that answer the same are joined.
 */
export function playbackTimeline(desired: DesiredState | null, from: Date, to: Date, options: TimelineOptions = {}): Timeline {
  const walk = walkTimeline(desired, from, to, options)
  for (;;) {
    const step = walk.next()
    if (step.done) return step.value
  }
}

/** playbackTimeline, pausing with `options.pause` after every slice of the work. */
export async function playbackTimelineAsync(desired: DesiredState | null, from: Date, to: Date, options: TimelineAsyncOptions): Promise<Timeline> {
  const walk = walkTimeline(desired, from, to, options)
  for (;;) {
    const step = walk.next()
    if (step.done) return step.value
    await options.pause()
  }
}

/** The walk of playbackTimeline, yielding after every slice of it. */
function* walkTimeline(desired: DesiredState | null, from: Date, to: Date, options: TimelineOptions): Generator<void, Timeline> {
  const max = options.maxSegments ?? 5000
  const zone = desired && isValidTimeZone(desired.timezone) ? desired.timezone : 'UTC'
  const open: Open[] = []
  let truncated = false
  const end = to.getTime()
  let t = from.getTime()
  // Each schedule (the assignment's, a takeover's) laid out once for the whole window.
  const laidOut = new Map<Schedule, ScheduleEvaluator>()
  const evaluate: EvaluateSchedule = (schedule, now, screenTimeZone) => {
    let e = laidOut.get(schedule)
    if (!e) laidOut.set(schedule, (e = scheduleEvaluator(schedule, screenTimeZone, t, end)))
    return e(now.getTime())
  }
  let steps = 0
  while (t < end) {
    const now = new Date(t)
    const layers = playbackLayers(desired, now, evaluate)
    let next: number | null = null
    for (const l of layers) if (l.changeAt !== null && l.changeAt > t && (next === null || l.changeAt < next)) next = l.changeAt
    // Every change point lies ahead; the guard only keeps a broken one from stalling the walk.
    const stop = Math.min(next === null ? end : Math.max(next, t + 1000), end)
    const at = layers.findIndex((l) => l.chosen !== null)
    const winnerLayer = at >= 0 ? layers[at]! : (layers.findLast((l) => l.source === 'schedule') ?? null)
    const winner = at >= 0 ? entryOf(desired!, layers[at]!) : winnerLayer ? { ...entryOf(desired!, winnerLayer), source: 'none' as const } : NONE
    const overridden =
      at >= 0
        ? layers
            .slice(at + 1)
            .filter((l) => l.chosen !== null)
            .map((l) => entryOf(desired!, l))
        : []
    const key = JSON.stringify([winner, overridden])
    const last = open.at(-1)
    if (last && last.key === key && last.end === t) last.end = stop
    else if (open.length === max) {
      truncated = true
      break
    } else open.push({ start: t, end: stop, winner, overridden, layer: winnerLayer, key })
    t = stop
    if (++steps % SLICE === 0) yield
  }
  const segments: TimelineSegment[] = []
  for (const s of open) {
    segments.push({
      ...s.winner,
      start: new Date(s.start).toISOString(),
      end: new Date(s.end).toISOString(),
      startLocal: localIso(s.start, zone),
      endLocal: localIso(s.end, zone),
      reason: reasonFor(desired, s, zone),
      overridden: s.overridden,
    })
    if (segments.length % SLICE === 0) yield
  }
  return { timezone: zone, truncated, segments }
}

/** `2027-03-28T09:00:00+02:00`: the wall clock of `zone` at an instant, with its offset. */
export function localIso(ms: number, zone: string): string {
  const local = localMsAt(ms, zone)
  const offsetMin = Math.round((local - ms) / 60_000)
  const sign = offsetMin < 0 ? '-' : '+'
  const abs = Math.abs(offsetMin)
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${new Date(local).toISOString().slice(0, 19)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
}

/** A local time for a sentence: `14:00` on the segment's own local day, else `2027-03-29 14:00`. */
function clock(ms: number, zone: string, dayOf: number): string {
  const text = new Date(localMsAt(ms, zone)).toISOString()
  const sameDay = text.slice(0, 10) === new Date(localMsAt(dayOf, zone)).toISOString().slice(0, 10)
  return sameDay ? text.slice(11, 16) : `${text.slice(0, 10)} ${text.slice(11, 16)}`
}

const quoted = (name: string | null, id: string | null) => (name ? `"${name}"` : (id ?? 'unnamed'))

/** The emergency or a cast by its content's name as the desired state carries it, quoted (else its id). */
function takeover(desired: DesiredState | null, e: TimelineEntry): string {
  if (e.source === 'emergency') return quoted(desired?.emergency?.content?.name ?? null, e.emergencyId)
  return quoted(desired?.casts.find((c) => c.id === e.castId)?.content?.name ?? null, e.castId)
}

function describe(desired: DesiredState | null, e: TimelineEntry): string {
  if (e.source === 'emergency') return `emergency ${takeover(desired, e)}`
  if (e.source === 'cast') return `cast ${takeover(desired, e)}`
  if (e.source === 'schedule') {
    const schedule = `schedule ${quoted(e.scheduleName, e.scheduleId)}`
    return e.ruleId ? `rule "${e.ruleId}" of ${schedule}` : `the fallback of ${schedule}`
  }
  return `the assigned ${e.contentKind} ${quoted(e.contentName, e.contentId)}`
}

function reasonFor(desired: DesiredState | null, s: Open, zone: string): string {
  const w = s.winner
  const span = `from ${clock(s.start, zone, s.start)} to ${clock(s.end, zone, s.start)}`
  const over = s.overridden[0] ? describe(desired, s.overridden[0]) : null
  switch (w.source) {
    case 'emergency':
      return `Emergency ${takeover(desired, w)} ${over ? `overrides ${over}` : 'plays'} until it is cleared.`
    case 'cast': {
      const expires = desired?.casts.find((c) => c.id === w.castId)?.expiresAt ?? null
      const until = expires === null ? 'until it is stopped' : `until ${clock(Date.parse(expires), zone, s.start)}`
      return `Cast ${takeover(desired, w)} ${over ? `overrides ${over}` : 'plays'} ${until}.`
    }
    case 'schedule': {
      const schedule = `schedule ${quoted(w.scheduleName, w.scheduleId)}`
      return w.ruleId ? `Rule "${w.ruleId}" of ${schedule} wins ${span}.` : `No rule of ${schedule} is on ${span}, so its fallback plays.`
    }
    case 'assignment':
      return `The screen is assigned ${w.contentKind} ${quoted(w.contentName, w.contentId)}.`
    default:
      if (w.scheduleId) return `No rule of schedule ${quoted(w.scheduleName, w.scheduleId)} is on ${span} and it has no fallback, so nothing plays.`
      return desired?.emergency || desired?.casts.length ? `Nothing that holds the screen can play ${span}.` : 'Nothing is assigned to the screen.'
  }
}
