import type { Migration } from './Migration.js'

export default {
  version: 680,
  name: 'availability history',
  statements: [
    // Presence as intervals (domains/devicelink writes them with the status change they
    // follow, in its transaction): a screen's connected stretch from its `screen.online` to
    // the moment its link dropped; `ended_at` null while it lasts. UTC ISO text with
    // milliseconds, so text order is time order.
    `CREATE TABLE presence_intervals (
      workspace_id TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      started_at TEXT NOT NULL,
      ended_at TEXT,
      PRIMARY KEY (screen_id, started_at)
    )`,
    `CREATE INDEX presence_intervals_workspace ON presence_intervals(workspace_id, started_at)`,
    // Screens online now have been since their status_since: their stretch starts there.
    `INSERT INTO presence_intervals (workspace_id, screen_id, started_at, ended_at)
      SELECT workspace_id, id, status_since, NULL FROM screens WHERE status = 'online' AND status_since IS NOT NULL`,
    // The panel's history (domains/reports, from the screens' reports): one row per stretch
    // of the same read-back power and playing state; `showing` = the panel not read back off
    // and content playing.
    `CREATE TABLE panel_intervals (
      workspace_id TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      started_at TEXT NOT NULL,
      ended_at TEXT,
      power TEXT NOT NULL,
      playing INTEGER NOT NULL,
      showing INTEGER NOT NULL,
      PRIMARY KEY (screen_id, started_at)
    )`,
    `CREATE INDEX panel_intervals_workspace ON panel_intervals(workspace_id, started_at)`,
  ],
} satisfies Migration
