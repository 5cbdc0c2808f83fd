import type { Migration } from './Migration.js'

export default {
  version: 70,
  name: 'play log',
  statements: [
    // Proof of play, one row per completed play a device reported. `id` is derived from the
    // record's content (see PlayLogRepository), so a batch sent again stores nothing twice.
    `CREATE TABLE play_log (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      source TEXT NOT NULL,
      content_kind TEXT NOT NULL,
      content_id TEXT NOT NULL,
      cast_id TEXT,
      emergency_id TEXT,
      item_kind TEXT NOT NULL,
      item_id TEXT NOT NULL,
      zone TEXT,
      started_at TEXT NOT NULL,
      ended_at TEXT NOT NULL,
      duration_ms BIGINT NOT NULL,
      received_at TEXT NOT NULL
    )`,
    `CREATE INDEX play_log_screen_time ON play_log(workspace_id, screen_id, started_at, id)`,
  ],
} satisfies Migration
