// The screens domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Defaulted } from '../../platform/db/schema.js'

export interface ScreensTable {
  id: string
  workspace_id: string
  node_id: string | null
  name: string
  device_secret_hash: string | null
  model: string | null
  serial_number: string | null
  status: Defaulted<string>
  last_seen_at: string | null
  content_kind: string | null
  content_id: string | null
  timezone: Defaulted<string>
  created_at: string
  updated_at: string
  desired_version: Defaulted<number>
  status_since: string | null
  reported: string | null
  reported_at: string | null
  /** `reported.agentVersion` of the last report (null before one that carries it). */
  agent_version: string | null
  panel_protocol: string | null
  panel_set_id: number | null
  panel_poll_seconds: number | null
  /** Where the panel is wired (a note for installers; migration 670). */
  panel_port_hint: string | null
  desired_published_at: string | null
  /** `in_sync`, `drifting` or `unknown` (domains/drift). */
  drift_state: Defaulted<string>
  drift_since: string | null
  /** JSON array of the drift items (what differs, since when). */
  drift_items: string | null
}

export interface DeviceRegistrationsTable {
  id: string
  pairing_code: string
  poll_secret_hash: string
  model: string | null
  serial_number: string | null
  created_at: string
  expires_at: string
  workspace_id: string | null
  screen_id: string | null
  claimed_at: string | null
  secret_issued_at: string | null
}

declare module '../../platform/db/schema.js' {
  interface DB {
    screens: ScreensTable
    device_registrations: DeviceRegistrationsTable
  }
}
