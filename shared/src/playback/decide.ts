// What the screen plays at an instant, decided on the device from the last
// desired state so playback keeps following casts' expiry and schedules while
// the cloud is unreachable. Order: emergency > newest unexpired cast >
// assignment (a schedule assignment is evaluated with the shared evaluator).
import { evaluateSchedule, type ContentRef, type Schedule } from '@svc/shared/schedule/index'
import type { ContentKind, DesiredCast, DesiredEmergency, DesiredState, PlayableContent, Playing, PlayingSource } from '@svc/shared/mqtt/index'

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
  /** The next instant this decision could change by time alone; null = never. */
  nextChangeAt: Date | null
}

type Chosen = Omit<PlaybackDecision, 'source' | 'castId' | 'emergencyId' | 'message' | 'nextChangeAt'>

interface LayerResult {
  chosen: Chosen | null
  /** When this layer's own answer could change (schedule boundary, expiry). */
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

function fromSchedule(desired: DesiredState, schedule: Schedule, now: Date): LayerResult {
  const r = evaluateSchedule(schedule, now, desired.timezone)
  const changeAt = r.nextChangeAt ? r.nextChangeAt.getTime() : null
  if (!r.content) return { chosen: null, changeAt }
  return {
    chosen: { contentKind: r.content.kind, contentId: r.content.id, content: lookup(desired, r.content), ruleId: r.ruleId },
    changeAt,
  }
}

/** A cast or emergency: plays its content, or evaluates it when it is a schedule. */
function fromTakeover(desired: DesiredState, item: DesiredCast | DesiredEmergency, now: Date): LayerResult {
  if (item.contentKind !== 'schedule') {
    return {
      chosen: { contentKind: item.contentKind, contentId: item.contentId, content: item.content ?? null, ruleId: null },
      changeAt: null,
    }
  }
  // A schedule takeover without its resolved schedule cannot be played; let the
  // layer below show rather than a black screen.
  const schedule = item.content?.schedule
  return schedule ? fromSchedule(desired, schedule, now) : { chosen: null, changeAt: null }
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

const NOTHING: Chosen = { contentKind: null, contentId: null, content: null, ruleId: null }

export function decidePlayback(desired: DesiredState | null, now: Date): PlaybackDecision {
  const base = { castId: null, emergencyId: null, message: null }
  if (!desired) return { source: 'none', ...NOTHING, ...base, nextChangeAt: null }
  let changeAt: number | null = null
  const done = (source: PlayingSource, chosen: Chosen, extra: Partial<PlaybackDecision> = {}): PlaybackDecision => ({
    source,
    ...chosen,
    ...base,
    ...extra,
    nextChangeAt: changeAt === null ? null : new Date(changeAt),
  })

  if (desired.emergency) {
    const e = desired.emergency
    const r = fromTakeover(desired, e, now)
    changeAt = earliest(changeAt, r.changeAt)
    if (r.chosen) return done('emergency', r.chosen, { emergencyId: e.id, message: e.message ?? null })
  }

  for (const cast of liveCasts(desired.casts, now)) {
    const expiry = cast.expiresAt === null ? null : Date.parse(cast.expiresAt)
    changeAt = earliest(changeAt, expiry)
    const r = fromTakeover(desired, cast, now)
    changeAt = earliest(changeAt, r.changeAt)
    if (r.chosen) return done('cast', r.chosen, { castId: cast.id })
  }

  const a = desired.assignment
  if (a && a.contentKind === 'schedule') {
    const schedule = desired.schedule ?? a.content?.schedule ?? null
    if (schedule) {
      const r = fromSchedule(desired, schedule, now)
      changeAt = earliest(changeAt, r.changeAt)
      if (r.chosen) return done('schedule', r.chosen)
    }
  } else if (a) {
    return done('assignment', { contentKind: a.contentKind, contentId: a.contentId, content: a.content ?? null, ruleId: null })
  }
  return done('none', NOTHING)
}

/** The `playing` block of a Reported message for a decision. */
export function toPlaying(decision: PlaybackDecision): Playing {
  if (decision.source === 'none' || decision.contentKind === null || decision.contentId === null) return { source: 'none', contentKind: null, contentId: null }
  const playing: Playing = { source: decision.source, contentKind: decision.contentKind, contentId: decision.contentId }
  if (decision.castId) playing.castId = decision.castId
  if (decision.emergencyId) playing.emergencyId = decision.emergencyId
  if (decision.ruleId) playing.ruleId = decision.ruleId
  return playing
}
