// The CAP domain's tables, as the migrations (platform/db/migrations 0620, 0621) leave them, merged
// into the database's type by declaration merging.
import type { Defaulted } from '../../platform/db/schema.js'

export interface CapFeedsTable {
  id: string
  workspace_id: string
  node_id: string | null
  name: string
  mode: string
  url: string | null
  interval_seconds: number
  /** JSON: {status, severity, urgency, certainty, events}. */
  accept: string
  /** JSON: {scopeKind, screenIds?, scopeNodeId?, groupId?}. */
  target: string
  /** null: the feed names no content, its alerts show their message alone. */
  content_kind: string | null
  content_id: string | null
  area_match: string
  /** JSON: {fullscreen: [...], banner: [...]}. */
  presentation: string
  language: string
  push_secret_hash: string | null
  etag: string | null
  last_modified: string | null
  next_fetch_at: string | null
  last_fetched_at: string | null
  last_error: string | null
  created_at: string
  updated_at: string
}

export interface CapAlertsTable {
  id: string
  feed_id: string
  workspace_id: string
  sender: string
  identifier: string
  sent: string
  status: string
  msg_type: string
  event: string | null
  severity: string | null
  urgency: string | null
  certainty: string | null
  headline: string | null
  expires: string | null
  source_url: string | null
  state: string
  reason: string | null
  emergency_id: string | null
  screens_targeted: number | null
  holding: Defaulted<number>
  received_at: string
  /** The parsed document (JSON) while it is handled; null once its outcome is written. */
  document: Defaulted<string | null>
  /** Until when the instance that claimed it owns its handling; null once handled. */
  lease_until: Defaulted<string | null>
}

export interface CapCancelsTable {
  feed_id: string
  sender: string
  identifier: string
  cancel_alert_id: string
}

declare module '../../platform/db/schema.js' {
  interface DB {
    cap_feeds: CapFeedsTable
    cap_alerts: CapAlertsTable
    cap_cancels: CapCancelsTable
  }
}
