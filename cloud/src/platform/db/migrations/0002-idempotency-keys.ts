import type { Migration } from './Migration.js'

export default {
  version: 2,
  name: 'idempotency keys',
  statements: [
    `CREATE TABLE idempotency_keys (
      workspace_id TEXT NOT NULL,
      route TEXT NOT NULL,
      idem_key TEXT NOT NULL,
      fingerprint TEXT NOT NULL,
      state TEXT NOT NULL,
      status_code INTEGER,
      body TEXT,
      created_at TEXT NOT NULL,
      PRIMARY KEY (workspace_id, route, idem_key)
    )`,
    `CREATE INDEX idempotency_created ON idempotency_keys(created_at)`,
  ],
} satisfies Migration
