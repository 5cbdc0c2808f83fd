import type { Migration } from './Migration.js'

// The audit log's entries lose their unique index on `id`: no query reads an entry by id
// (lists, cursors, verification and retention go by chain and seq, the primary key, or by
// the actor, resource and time indexes), and the id is unique by construction (a
// monotonic ULID per instance, 80 random bits between instances). The index cost every
// recorded write one more B-tree insert and, on SQLite, one more page in each commit.
export default {
  version: 644,
  name: 'audit log: no index on the entry id',
  statements: ['DROP INDEX IF EXISTS audit_entries_id'],
} satisfies Migration
