import type { Migration } from './Migration.js'

export default {
  version: 60,
  name: 'events outbox',
  statements: [
    // Domain events written in the transaction of the change that causes them; a dispatcher
    // turns each into webhook deliveries and alert inputs after commit, and marks it.
    `CREATE TABLE events_outbox (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      event TEXT NOT NULL,
      data TEXT NOT NULL,
      occurred_at TEXT NOT NULL,
      dispatched_at TEXT
    )`,
    `CREATE INDEX events_outbox_pending ON events_outbox(dispatched_at, id)`,
  ],
} satisfies Migration
