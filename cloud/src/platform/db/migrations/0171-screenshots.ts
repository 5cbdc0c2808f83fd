import type { Migration } from './Migration.js'

export default {
  version: 171,
  name: 'screenshots',
  statements: [
    // One row per screenshot job; the PNG itself is in the media store under its sha256.
    `CREATE TABLE screenshots (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      status TEXT NOT NULL,
      reason TEXT,
      sha256 TEXT,
      size_bytes BIGINT,
      width INTEGER,
      height INTEGER,
      created_at TEXT NOT NULL,
      sent_at TEXT,
      completed_at TEXT
    )`,
    `CREATE INDEX screenshots_screen ON screenshots(screen_id, status, created_at)`,
    `CREATE INDEX screenshots_created ON screenshots(created_at)`,
  ],
} satisfies Migration
