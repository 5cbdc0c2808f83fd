// The events domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.

/** Domain events written in the transaction of the change that causes them, dispatched after commit. */
export interface EventsOutboxTable {
  /** A ULID from the service's IdGenerator: increasing, so id order is write order. */
  id: string
  workspace_id: string
  event: string
  /** JSON object: the event's data. */
  data: string
  occurred_at: string
  /** Set once the event has been handed to webhooks and alerts. */
  dispatched_at: string | null
}

declare module '../../platform/db/schema.js' {
  interface DB {
    events_outbox: EventsOutboxTable
  }
}
