// What a screen plays at an instant, decided from its desired state. The agent decides
// with it on the device (so playback keeps following casts' expiry and schedules while
// the cloud is unreachable), and the cloud's timeline walks the same function over a
// window, so the two cannot disagree. Order: emergency > newest unexpired cast >
// assignment (a schedule assignment is evaluated with the shared schedule evaluator).
import { evaluateSchedule, type ContentRef, type Schedule, type ScheduleEvaluation } from '../schedule/index.js'
import type { ContentKind, DesiredCast, DesiredEmergency, DesiredState, EmergencyAlert, PlayableContent, Playing, PlayingSource } from '../mqtt/index.js'

export interface PlaybackDecision {
  source: PlayingSource
  /** What plays; null exactly when source is `none`. */
  contentKind: ContentKind | null
  contentId: string | null
  /** The cloud's resolved description of that content, when it sent one. */
  content: PlayableContent | null
  castId: string | null
  emergencyId: string | null
  /** The schedule rule that chose the content (null for a schedule's fallback). */
  ruleId: string | null
  /** Emergency text to show over the content. */
  message: string | null
  /**
   * `banner`: an emergency shown as a band over what plays beneath it (emergencyId and
   * message are the emergency's, the content the layer below's); `message`: an emergency
   * without content, its message alone filling the screen (source `emergency`, contentKind
   * and contentId null); absent = full screen over the emergency's content.
   */
  presentation?: 'banner' | 'message'
  /** A CAP alert's text field by field, for the layout of its message. */
  alert?: EmergencyAlert
  /** The next instant this decision could change by time alone; null = never. */
  nextChangeAt: Date | null
}

type Chosen = Pick<PlaybackDecision, 'contentKind' | 'contentId' | 'content' | 'ruleId'>

/**
 * One layer's answer at an instant: an emergency, one live cast, or the screen's own
 * assignment (or its schedule). `chosen` null = the layer shows nothing now (a schedule
 * with no rule on and no fallback) and the layer below plays.
 */
export interface PlaybackLayer {
  source: Exclude<PlayingSource, 'none'>
  chosen: Chosen | null
  castId: string | null
  emergencyId: string | null
  message: string | null
  /** An emergency layer shown as a banner over the layers below. */
  banner?: boolean
  /** An emergency layer without content: its message alone fills the screen. */
  messageOnly?: boolean
  /** An emergency layer's CAP alert text. */
  alert?: EmergencyAlert
  /** The schedule this layer evaluated (the assignment's or the takeover's), else null. */
  scheduleId: string | null
  /** When this layer's own answer could change (schedule boundary, cast expiry); null = never. */
  changeAt: number | null
}

function earliest(a: number | null, b: number | null): number | null {
  if (a === null) return b
  if (b === null) return a
  return Math.min(a, b)
}

function lookup(desired: DesiredState, ref: ContentRef): PlayableContent | null {
  const hit = desired.library?.find((e) => e.kind === ref.kind && e.id === ref.id)
  return hit ? hit.content : null
}

/**
 * How a schedule is evaluated for the screen's zone at an instant: evaluateSchedule, or
 * an equivalent built once for a window (the timeline's scheduleEvaluator).
 */
export type EvaluateSchedule = (schedule: Schedule, now: Date, screenTimeZone: string) => ScheduleEvaluation

function fromSchedule(desired: DesiredState, schedule: Schedule, now: Date, evaluate: EvaluateSchedule): { chosen: Chosen | null; changeAt: number | null } {
  const r = evaluate(schedule, now, desired.timezone)
  const changeAt = r.nextChangeAt ? r.nextChangeAt.getTime() : null
  if (!r.content) return { chosen: null, changeAt }
  return {
    chosen: { contentKind: r.content.kind, contentId: r.content.id, content: lookup(desired, r.content), ruleId: r.ruleId },
    changeAt,
  }
}

/** A cast or emergency: plays its content, or evaluates it when it is a schedule. */
function fromTakeover(
  desired: DesiredState,
  item: DesiredCast | DesiredEmergency,
  now: Date,
  evaluate: EvaluateSchedule,
): { chosen: Chosen | null; changeAt: number | null } {
  if (item.contentKind !== 'schedule') {
    return {
      chosen: { contentKind: item.contentKind, contentId: item.contentId, content: item.content ?? null, ruleId: null },
      changeAt: null,
    }
  }
  // A schedule takeover without its resolved schedule cannot be played; let the
  // layer below show rather than a black screen.
  const schedule = item.content?.schedule
  return schedule ? fromSchedule(desired, schedule, now, evaluate) : { chosen: null, changeAt: null }
}

/** Casts that are still running at `now`, newest first (by triggeredAt, then list order). */
export function liveCasts(casts: readonly DesiredCast[], now: Date): DesiredCast[] {
  const t = now.getTime()
  return casts
    .map((cast, index) => ({ cast, index, triggered: Date.parse(cast.triggeredAt) }))
    .filter(({ cast }) => cast.expiresAt === null || !(Date.parse(cast.expiresAt) <= t))
    .sort((a, b) => (b.triggered || 0) - (a.triggered || 0) || a.index - b.index)
    .map(({ cast }) => cast)
}

/**
 * Every layer of `desired` at `now`, highest first: the emergency, each live cast
 * (newest first), then the assignment. The first layer with something `chosen` plays;
 * the ones below it are what it overrides. No layer at all = nothing assigned.
 */
export function playbackLayers(desired: DesiredState | null, now: Date, evaluate: EvaluateSchedule = evaluateSchedule): PlaybackLayer[] {
  if (!desired) return []
  const layers: PlaybackLayer[] = []
  const none = { castId: null, emergencyId: null, message: null, scheduleId: null }
  if (desired.emergency) {
    const e = desired.emergency
    const base = { source: 'emergency' as const, ...none, emergencyId: e.id, message: e.message ?? null, ...(e.alert ? { alert: e.alert } : {}) }
    if (e.messageOnly === 'banner') layers.push({ ...base, banner: true, chosen: null, changeAt: null })
    // No content of its own: the layer holds the screen with nothing chosen to play.
    else if (e.messageOnly) layers.push({ ...base, messageOnly: true, chosen: { ...NOTHING }, changeAt: null })
    else {
      const r = fromTakeover(desired, e, now, evaluate)
      layers.push({
        ...base,
        ...(e.presentation === 'banner' ? { banner: true } : {}),
        scheduleId: e.contentKind === 'schedule' ? e.contentId : null,
        ...r,
      })
    }
  }
  for (const cast of liveCasts(desired.casts, now)) {
    const expiry = cast.expiresAt === null ? null : Date.parse(cast.expiresAt)
    const r = fromTakeover(desired, cast, now, evaluate)
    layers.push({
      source: 'cast',
      ...none,
      castId: cast.id,
      scheduleId: cast.contentKind === 'schedule' ? cast.contentId : null,
      chosen: r.chosen,
      changeAt: earliest(expiry, r.changeAt),
    })
  }
  const a = desired.assignment
  if (a && a.contentKind === 'schedule') {
    const schedule = desired.schedule ?? a.content?.schedule ?? null
    const r = schedule ? fromSchedule(desired, schedule, now, evaluate) : { chosen: null, changeAt: null }
    layers.push({ source: 'schedule', ...none, scheduleId: a.contentId, ...r })
  } else if (a) {
    layers.push({
      source: 'assignment',
      ...none,
      chosen: { contentKind: a.contentKind, contentId: a.contentId, content: a.content ?? null, ruleId: null },
      changeAt: null,
    })
  }
  return layers
}

const NOTHING: Chosen = { contentKind: null, contentId: null, content: null, ruleId: null }

/**
 * The decision `layers` make: the first layer showing something, and when that could change.
 * A banner emergency on top lets the layers below play and lays its message over them (its
 * own content plays only when nothing below does).
 */
export function decideFromLayers(layers: readonly PlaybackLayer[]): PlaybackDecision {
  const top = layers[0]
  if (top?.source === 'emergency' && top.banner) {
    const below = decideLayers(layers.slice(1))
    const over = below.source === 'none' ? decideLayers([top]) : below
    const changeAt = earliest(over.nextChangeAt?.getTime() ?? null, top.changeAt)
    return {
      ...over,
      emergencyId: top.emergencyId,
      message: top.message,
      presentation: 'banner',
      ...(top.alert ? { alert: top.alert } : {}),
      nextChangeAt: changeAt === null ? null : new Date(changeAt),
    }
  }
  const d = decideLayers(layers)
  if (d.source !== 'emergency' || !top) return d
  return { ...d, ...(top.messageOnly ? { presentation: 'message' as const } : {}), ...(top.alert ? { alert: top.alert } : {}) }
}

function decideLayers(layers: readonly PlaybackLayer[]): PlaybackDecision {
  let changeAt: number | null = null
  for (const layer of layers) {
    // A layer's boundaries count while it or one above it could change what plays; those
    // below the winner cannot, so the decision's next change ignores them.
    changeAt = earliest(changeAt, layer.changeAt)
    if (layer.chosen) {
      return {
        source: layer.source,
        ...layer.chosen,
        castId: layer.castId,
        emergencyId: layer.emergencyId,
        message: layer.message,
        nextChangeAt: changeAt === null ? null : new Date(changeAt),
      }
    }
  }
  return { source: 'none', ...NOTHING, castId: null, emergencyId: null, message: null, nextChangeAt: changeAt === null ? null : new Date(changeAt) }
}

export function decidePlayback(desired: DesiredState | null, now: Date): PlaybackDecision {
  return decideFromLayers(playbackLayers(desired, now))
}

/**
 * The `playing` block of a Reported message for a decision. An emergency on screen without
 * content (its message alone, or a message-only banner over nothing) is source `emergency`
 * with null content, so it counts as applied.
 */
export function toPlaying(decision: PlaybackDecision): Playing {
  if (decision.source === 'none' || decision.contentKind === null || decision.contentId === null)
    return decision.emergencyId
      ? { source: 'emergency', contentKind: null, contentId: null, emergencyId: decision.emergencyId }
      : { source: 'none', contentKind: null, contentId: null }
  const playing: Playing = { source: decision.source, contentKind: decision.contentKind, contentId: decision.contentId }
  if (decision.castId) playing.castId = decision.castId
  if (decision.emergencyId) playing.emergencyId = decision.emergencyId
  if (decision.ruleId) playing.ruleId = decision.ruleId
  return playing
}
