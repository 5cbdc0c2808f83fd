import type { Migration } from './Migration.js'

export default {
  version: 630,
  name: 'audit log',
  statements: [
    // The audit log (domains/audit): one hash chain per workspace (chain = the workspace id;
    // '' for what happened outside any workspace, such as a device asking to be paired).
    // Rows are only ever inserted, and deleted by the retention task from the chain's oldest end.
    `CREATE TABLE audit_entries (
      chain TEXT NOT NULL,
      seq INTEGER NOT NULL,
      id TEXT NOT NULL,
      at TEXT NOT NULL,
      actor_kind TEXT NOT NULL,
      actor_id TEXT,
      actor_name TEXT,
      via TEXT NOT NULL,
      action TEXT NOT NULL,
      resource_kind TEXT NOT NULL,
      resource_id TEXT,
      resource_name TEXT,
      node_id TEXT,
      changes TEXT NOT NULL,
      request_id TEXT,
      ip TEXT,
      outcome TEXT NOT NULL,
      prev_hash TEXT NOT NULL,
      hash TEXT NOT NULL,
      PRIMARY KEY (chain, seq)
    )`,
    `CREATE UNIQUE INDEX audit_entries_id ON audit_entries(id)`,
    `CREATE INDEX audit_entries_actor ON audit_entries(chain, actor_id, seq)`,
    `CREATE INDEX audit_entries_resource ON audit_entries(chain, resource_id, seq)`,
    `CREATE INDEX audit_entries_at ON audit_entries(chain, at)`,
    // Each chain's head (its last entry's seq and hash, what the next entry links to) and its
    // anchor: the seq and hash of the last entry retention cut, which the first kept entry links to.
    `CREATE TABLE audit_chains (
      chain TEXT PRIMARY KEY,
      head_seq INTEGER NOT NULL,
      head_hash TEXT NOT NULL,
      anchor_seq INTEGER NOT NULL,
      anchor_hash TEXT NOT NULL
    )`,
  ],
} satisfies Migration
