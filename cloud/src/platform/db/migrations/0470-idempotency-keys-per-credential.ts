import type { Migration } from './Migration.js'

// An Idempotency-Key is scoped per credential (workspace, credential, route, key), not per
// workspace: a key pinned to one location repeating another credential's key got that
// credential's answer. The records are a 24-hour retry memory, and the old ones do not say
// which credential made them, so the table is made anew: a retry sent across the upgrade
// runs again instead of replaying.
export default {
  version: 470,
  name: 'idempotency keys per credential',
  statements: [
    `DROP TABLE idempotency_keys`,
    `CREATE TABLE idempotency_keys (
      workspace_id TEXT NOT NULL,
      credential TEXT NOT NULL,
      route TEXT NOT NULL,
      idem_key TEXT NOT NULL,
      fingerprint TEXT NOT NULL,
      state TEXT NOT NULL,
      status_code INTEGER,
      body TEXT,
      created_at TEXT NOT NULL,
      PRIMARY KEY (workspace_id, credential, route, idem_key)
    )`,
    `CREATE INDEX idempotency_created ON idempotency_keys(created_at)`,
  ],
} satisfies Migration
