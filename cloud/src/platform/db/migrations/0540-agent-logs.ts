import type { Migration } from './Migration.js'

export default {
  version: 540,
  name: 'agent logs',
  statements: [
    // One row per request for a screen's recent log lines (domains/agentlogs): the request,
    // its state, and once uploaded the lines themselves as one JSON array (at most 1 MiB,
    // read whole by the one GET that serves them; the lists leave the column out). Rows go
    // 7 days after they were asked for (the housekeeper).
    `CREATE TABLE agent_logs (
      id TEXT PRIMARY KEY,
      workspace_id TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      state TEXT NOT NULL,
      reason TEXT,
      max_lines INTEGER NOT NULL,
      since TEXT,
      requested_at TEXT NOT NULL,
      sent_at TEXT,
      completed_at TEXT,
      uploaded_at TEXT,
      line_count INTEGER,
      truncated INTEGER,
      size_bytes INTEGER,
      lines TEXT
    )`,
    // A screen's requests, newest first, and its open ones (the job delivery).
    `CREATE INDEX agent_logs_screen ON agent_logs(screen_id, state, requested_at)`,
    // The expiry sweep and the purge.
    `CREATE INDEX agent_logs_requested ON agent_logs(requested_at)`,
  ],
} satisfies Migration
