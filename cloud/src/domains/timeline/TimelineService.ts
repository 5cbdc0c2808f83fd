// Why a screen plays what it plays, and what it will play: its desired state (built exactly
// as it is published to the device) walked over a window with the decision the agent plays
// by (@svc/shared/playback). Nothing here decides on its own. The walk is proportional to
// the segments it answers (at most TIMELINE_MAX_SEGMENTS) and gives the event loop a turn
// after every slice of it, so a long one never holds up other requests.
import { Type, type Static } from '@sinclair/typebox'
import type { DesiredState } from '@svc/shared/mqtt/index'
import { playbackTimelineAsync, type Timeline as Walked } from '@svc/shared/playback/index'
import type { Clock } from '../../platform/clock.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import { validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { parseTimeRange } from '../../platform/timeRange.js'
import type { DesiredStateBuilder } from '../devicelink/index.js'
import type { ScreenService } from '../screens/index.js'

export const TIMELINE_DEFAULT_HOURS = 24
export const TIMELINE_MAX_DAYS = 31
/** Most segments one answer carries; `truncated` says when the window held more. */
export const TIMELINE_MAX_SEGMENTS = 5000
const HOUR_MS = 3_600_000

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** A desired state walked over [from, to), letting other work run between slices of the walk. */
export function walkTimeline(desired: DesiredState | null, from: number, to: number): Promise<Walked> {
  return playbackTimelineAsync(desired, new Date(from), new Date(to), { maxSegments: TIMELINE_MAX_SEGMENTS, pause: nextTurn })
}

const SOURCES = ['emergency', 'cast', 'schedule', 'assignment', 'none'] as const

const entryFields = {
  source: StringEnum(SOURCES, { description: 'Which layer plays: an emergency, a cast, the assigned schedule, the plain assignment, or nothing.' }),
  contentKind: Nullable(Type.String({ description: 'What plays (for a schedule: the content its rule or fallback chose).' })),
  contentId: Nullable(Type.String()),
  contentName: Nullable(Type.String()),
  castId: Nullable(Type.String()),
  emergencyId: Nullable(Type.String()),
  scheduleId: Nullable(Type.String({ description: 'The schedule that chose the content (the assignment, or a cast or emergency of a schedule).' })),
  scheduleName: Nullable(Type.String()),
  ruleId: Nullable(Type.String({ description: "The schedule rule that chose it; null for the schedule's fallback." })),
}

export const TimelineEntry = Type.Object(entryFields)

export const TimelineSegment = Type.Object({
  start: Timestamp,
  end: { ...Timestamp, description: 'Exclusive.' },
  startLocal: Type.String({ description: "The start on the screen's wall clock, with its UTC offset then, e.g. 2027-03-28T09:00:00+02:00." }),
  endLocal: Type.String(),
  ...entryFields,
  reason: Type.String({ description: 'One sentence: why this plays, e.g. `Cast cst_… overrides rule "lunch" of schedule "Menu" until 14:00.`' }),
  overridden: Type.Array(TimelineEntry, { description: 'What would play without the winner, highest layer first.' }),
})

export const Timeline = Type.Object({
  screenId: Type.String(),
  timezone: Type.String({ description: "The screen's IANA time zone, which the local times and the reasons use." }),
  from: Timestamp,
  to: Timestamp,
  segments: Type.Array(TimelineSegment),
  truncated: Type.Boolean({
    description: `True when the window held more segments than one answer carries (${TIMELINE_MAX_SEGMENTS.toLocaleString('en-US')}); ask again from the last end.`,
  }),
})
export type TimelineView = Static<typeof Timeline>

export class TimelineService {
  constructor(
    private readonly screens: Pick<ScreenService, 'get'>,
    private readonly desired: Pick<DesiredStateBuilder, 'build'>,
    private readonly clock: Clock,
  ) {}

  /** What the screen will play in [from, to): the next 24 hours by default, at most 31 days. */
  async forScreen(p: Principal, screenId: string, q: { from?: string; to?: string }): Promise<TimelineView> {
    await this.screens.get(p, screenId)
    const range = parseTimeRange(q)
    const from = range.from ? Date.parse(range.from) : range.to ? Date.parse(range.to) - TIMELINE_DEFAULT_HOURS * HOUR_MS : this.clock.now().getTime()
    const to = range.to ? Date.parse(range.to) : from + TIMELINE_DEFAULT_HOURS * HOUR_MS
    if (to <= from) throw validation('to must be after from.')
    if (to - from > TIMELINE_MAX_DAYS * 24 * HOUR_MS) throw validation(`from and to are at most ${TIMELINE_MAX_DAYS} days apart.`)
    const desired = await this.desired.build(p.workspaceId, screenId)
    const tl = await walkTimeline(desired, from, to)
    return {
      screenId,
      timezone: tl.timezone,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      segments: tl.segments,
      truncated: tl.truncated,
    }
  }
}
