// The takeovers domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Defaulted } from '../../platform/db/schema.js'

export interface CastsTable {
  id: string
  workspace_id: string
  node_id: string | null
  content_kind: string
  content_id: string
  content_name: string | null
  scope_kind: string
  scope_node_id: string | null
  /** scope_kind 'group': the group. */
  scope_group_id: Defaulted<string | null>
  status: string
  screen_count: number
  triggered_at: string
  expires_at: string | null
  ended_at: string | null
  replaced_by: string | null
  created_by: string
}

export interface CastScreensTable {
  cast_id: string
  screen_id: string
  state: string
  published_version: Defaulted<number | null>
  published_at: Defaulted<string | null>
  applied_at: Defaulted<string | null>
}

export interface EmergenciesTable {
  id: string
  workspace_id: string
  node_id: string | null
  /** null for an emergency without content (a CAP feed naming none: its message alone). */
  content_kind: string | null
  content_id: string | null
  content_name: string | null
  message: string | null
  scope_kind: string
  scope_node_id: string | null
  /** scope_kind 'group': the group. */
  scope_group_id: Defaulted<string | null>
  status: string
  screen_count: number
  screens_released: number | null
  started_at: string
  cleared_at: string | null
  created_by: string
  cleared_by: string | null
  /** When `emergency.reach` was recorded (every screen applied it, or 60 s passed); null before. */
  reach_at: Defaulted<string | null>
  /** 'fullscreen' (the default) or 'banner' over the running content. */
  presentation: Defaulted<string>
  /** Started by a CAP feed: the feed and the alert (domains/cap). */
  source_cap_feed_id: Defaulted<string | null>
  source_cap_alert_id: Defaulted<string | null>
  /** A CAP alert's text field by field (JSON EmergencyAlert), for the player's layout. */
  alert: Defaulted<string | null>
}

export interface EmergencyScreensTable {
  emergency_id: string
  screen_id: string
  active: number
  published_version: Defaulted<number | null>
  published_at: Defaulted<string | null>
  applied_at: Defaulted<string | null>
}

declare module '../../platform/db/schema.js' {
  interface DB {
    casts: CastsTable
    cast_screens: CastScreensTable
    emergencies: EmergenciesTable
    emergency_screens: EmergencyScreensTable
  }
}
