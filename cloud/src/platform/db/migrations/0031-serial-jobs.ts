import type { Migration } from './Migration.js'

export default {
  version: 31,
  name: 'serial jobs',
  statements: [
    // The database is the source of truth for delivery: a job without a result is
    // (re)published whenever its screen connects, so it survives a cloud restart.
    `CREATE TABLE serial_jobs (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL REFERENCES workspaces(id),
      screen_id TEXT NOT NULL,
      bytes_hex TEXT NOT NULL,
      protocol TEXT,
      timeout_ms INTEGER,
      template_id TEXT,
      item_id TEXT,
      status TEXT NOT NULL DEFAULT 'queued',
      reply_hex TEXT,
      sent_hex TEXT,
      reason TEXT,
      created_at TEXT NOT NULL,
      sent_at TEXT,
      completed_at TEXT
    )`,
    `CREATE INDEX serial_jobs_screen ON serial_jobs(screen_id, id)`,
    `CREATE INDEX serial_jobs_open ON serial_jobs(status, screen_id)`,
  ],
} satisfies Migration
