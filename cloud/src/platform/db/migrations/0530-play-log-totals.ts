import type { Migration } from './Migration.js'

export default {
  version: 530,
  name: 'play log totals',
  statements: [
    // Proof of display at volume: each screen's plays of each content per UTC day and per
    // UTC hour (`period`: `YYYY-MM-DD` or `YYYY-MM-DDTHH`, when its plays started), kept
    // beside `play_log` in the transaction that stores them. A summary reads the whole days
    // of its window from the daily totals, the whole hours beside them from the hourly ones,
    // and only the partial hours at its ends from `play_log`.
    `CREATE TABLE play_log_daily (
      workspace_id TEXT NOT NULL,
      period TEXT NOT NULL,
      content_kind TEXT NOT NULL,
      content_id TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      plays BIGINT NOT NULL,
      duration_ms BIGINT NOT NULL,
      panel_on_ms BIGINT NOT NULL,
      PRIMARY KEY (workspace_id, period, content_kind, content_id, screen_id)
    )`,
    `CREATE TABLE play_log_hourly (
      workspace_id TEXT NOT NULL,
      period TEXT NOT NULL,
      content_kind TEXT NOT NULL,
      content_id TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      plays BIGINT NOT NULL,
      duration_ms BIGINT NOT NULL,
      panel_on_ms BIGINT NOT NULL,
      PRIMARY KEY (workspace_id, period, content_kind, content_id, screen_id)
    )`,
    // Plays stored before this release, written in time order as new plays are, so a
    // window's totals sit together on disk.
    `INSERT INTO play_log_daily (workspace_id, period, content_kind, content_id, screen_id, plays, duration_ms, panel_on_ms)
      SELECT workspace_id, substr(started_at, 1, 10), content_kind, content_id, screen_id,
        count(*), sum(duration_ms), sum(CASE WHEN panel_power = 'on' THEN duration_ms ELSE 0 END)
      FROM play_log
      GROUP BY workspace_id, substr(started_at, 1, 10), content_kind, content_id, screen_id
      ORDER BY 1, 2`,
    `INSERT INTO play_log_hourly (workspace_id, period, content_kind, content_id, screen_id, plays, duration_ms, panel_on_ms)
      SELECT workspace_id, substr(started_at, 1, 13), content_kind, content_id, screen_id,
        count(*), sum(duration_ms), sum(CASE WHEN panel_power = 'on' THEN duration_ms ELSE 0 END)
      FROM play_log
      GROUP BY workspace_id, substr(started_at, 1, 13), content_kind, content_id, screen_id
      ORDER BY 1, 2`,
    // The window's partial hours are read by time within the workspace.
    `CREATE INDEX play_log_workspace_started ON play_log(workspace_id, started_at)`,
  ],
} satisfies Migration
