// The seam between the device link and the content library. Casts, emergencies and the
// desired state ask it whether content exists, can play, is shared to a screen's
// location, and what a device needs to play it. The product's resolver is the library as
// the device link wraps it (devicelink/LibraryContentResolver.ts); tests may pass a small
// in-memory one through buildApp deps (content/testing/InMemoryContentResolver.ts).
import type { ContentKind, LibraryEntry, PlayableContent } from '@svc/shared/mqtt/index'
import type { Schedule } from '@svc/shared/schedule/index'

export interface ContentRef {
  kind: ContentKind
  id: string
}

export type Playability = { playable: true } | { playable: false; reason: string }

export interface ContentResolver {
  /** Does this content exist in the workspace? (Absent → 422 validation_error "unknown content".) */
  exists(workspaceId: string, ref: ContentRef): Promise<boolean>
  /** Can it play now? (No → 422 content_unplayable with the reason, e.g. "still processing".) */
  playability(workspaceId: string, ref: ContentRef): Promise<Playability>
  /** Is it shared to a screen homed at `nodeId` (null = root)? (No → 403 not_shared.) */
  isAvailableAt(workspaceId: string, ref: ContentRef, nodeId: string | null): Promise<boolean>
  /** What the device needs to play it without another request; null when unknown. */
  describeForDevice(workspaceId: string, ref: ContentRef): Promise<PlayableContent | null>
  /**
   * For an assignment of kind `schedule`: the resolved schedule and descriptions of the
   * content it names (DesiredState `schedule` and `library`). Optional: without it the
   * desired state carries `schedule: null`.
   */
  resolveSchedule?(workspaceId: string, scheduleId: string): Promise<{ schedule: Schedule; library: LibraryEntry[] } | null>
  /**
   * The same, and the schedule's device description, as they would be were `body` the
   * schedule's stored body (the timeline preview of an update); null when it could not
   * play. Optional: without it schedule updates cannot be previewed.
   */
  resolveScheduleWith?(workspaceId: string, scheduleId: string, body: Record<string, unknown>): Promise<ScheduleWith | null>
}

export interface ScheduleWith {
  content: PlayableContent
  schedule: Schedule
  library: LibraryEntry[]
}
