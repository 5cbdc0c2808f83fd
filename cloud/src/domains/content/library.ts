// The content library's shared types: an item wherever its table, its API view, whether it
// plays, and the hooks' listener shapes.
import type { MediaRow } from './ContentRepository.js'
import type { Body, ContentKind } from './kinds.js'

/** A media row as the library reads it (MediaService owns the table's writes). */
export type MediaRowLite = MediaRow

/** Any content item, whatever its table. */
export interface Located {
  kind: ContentKind
  id: string
  workspaceId: string
  name: string
  nodeId: string | null
  recalledAt: string | null
  recallReason: string | null
  media?: MediaRowLite
  body?: Body
}

export type ContentView = Record<string, unknown> & {
  id: string
  name: string
  nodeId: string | null
  sharedWith: string[]
  createdAt: string
  updatedAt: string
}

export interface Playability {
  playable: boolean
  /** Stable code when not playable: not_found, not_playable_kind, recalled, processing, failed, empty. */
  code?: string
  /** Human reason, fit for the message of a 422 content_unplayable. */
  reason?: string
}

export type ContentChangeListener = (workspaceId: string, kind: ContentKind, id: string) => Promise<void> | void
/** Something outside the library that uses content (screen assignments, casts) and blocks its deletion. */
export type ContentUsage = (workspaceId: string, kind: ContentKind, id: string) => Promise<{ what: string; count: number } | null>
