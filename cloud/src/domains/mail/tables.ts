// The mail domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Selectable } from 'kysely'

/** Mail waiting to be sent (the mail outbox; domain events go to `events_outbox`). */
export interface OutboxTable {
  id: string
  workspace_id: string | null
  to_addresses: string
  subject: string
  body: string
  created_at: string
  sent_at: string | null
  error: string | null
  /** JSON [{filename, contentType, content}] of the files sent with it; null for none. */
  attachments: string | null
}

export type MailOutboxRow = Selectable<OutboxTable>

declare module '../../platform/db/schema.js' {
  interface DB {
    outbox: OutboxTable
  }
}
