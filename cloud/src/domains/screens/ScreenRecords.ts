// What the screens domain hands other domains of its rows (the `screenRecords` provision):
// the reads behind targets, desired state and URL refresh, and the desired version's bump.
// The table stays written by ScreenRepository alone; other domains get these methods, not
// the repository. The types other domains share about a screen's desired and reported
// state live here too.
import type { Reported } from '@svc/shared/mqtt/index'
import type { ScreenRepository } from './ScreenRepository.js'

export type ScreenRecords = Pick<
  ScreenRepository,
  | 'forDesiredState'
  | 'bumpDesiredVersions'
  | 'targets'
  | 'agentsOf'
  | 'targetCounts'
  | 'targetIds'
  | 'publishedBefore'
  | 'driftInputs'
  | 'setDrift'
  | 'unansweredSince'
  | 'drifting'
>

/** Republishes the desired state of these screens. */
export type MarkDirty = (workspaceId: string, screenIds: string[]) => Promise<void>
/** MarkDirty that also takes a reader of the screens, run behind the caller (the device link's publisher). */
export type MarkDirtyLater = (workspaceId: string, screens: string[] | (() => Promise<string[]>)) => Promise<void>

/** A screen's reported state, as the device link received it. */
export interface ScreenReport {
  workspaceId: string
  screenId: string
  nodeId: string | null
  reported: Reported
  at: string
}
