// The serial domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Selectable } from 'kysely'
import type { Defaulted } from '../../platform/db/schema.js'

export interface SerialTemplatesTable {
  id: string
  workspace_id: string
  node_id: string | null
  name: string
  model: string | null
  /** JSON array of items, read and written whole. */
  items: Defaulted<string>
  created_at: string
  updated_at: string
}

export interface SerialJobsTable {
  id: string
  workspace_id: string
  screen_id: string
  bytes_hex: string
  protocol: string | null
  timeout_ms: number | null
  template_id: string | null
  item_id: string | null
  status: Defaulted<string>
  reply_hex: string | null
  sent_hex: string | null
  reason: string | null
  created_at: string
  sent_at: string | null
  completed_at: string | null
}

export type SerialTemplateRow = Selectable<SerialTemplatesTable>
export type SerialJobRow = Selectable<SerialJobsTable>

declare module '../../platform/db/schema.js' {
  interface DB {
    serial_templates: SerialTemplatesTable
    serial_jobs: SerialJobsTable
  }
}
