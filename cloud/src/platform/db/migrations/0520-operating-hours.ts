import type { Migration } from './Migration.js'

export default {
  version: 520,
  name: 'operating hours',
  statements: [
    // When a location's or a screen's panels should be on: {weekly, exceptions} as JSON. A
    // screen without its own hours takes its nearest location's up the tree.
    `CREATE TABLE operating_hours (
      workspace_id TEXT NOT NULL,
      owner_kind TEXT NOT NULL,
      owner_id TEXT NOT NULL,
      hours TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (owner_kind, owner_id)
    )`,
    `CREATE INDEX operating_hours_workspace ON operating_hours (workspace_id)`,
  ],
} satisfies Migration
