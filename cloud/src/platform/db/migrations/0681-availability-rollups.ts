import type { Migration } from './Migration.js'

export default {
  version: 681,
  name: 'availability roll-ups',
  statements: [
    // Hourly roll-ups of the availability history (domains/reports): per screen and UTC hour,
    // the union of the short closed stretches (online; panel showing content) that fell in
    // it, as JSON arrays of [start, end) epoch milliseconds. A flapping screen's thousands of
    // stretches become at most one row an hour.
    `CREATE TABLE availability_hours (
      workspace_id TEXT NOT NULL,
      screen_id TEXT NOT NULL,
      hour TEXT NOT NULL,
      online TEXT NOT NULL,
      showing TEXT NOT NULL,
      PRIMARY KEY (screen_id, hour)
    )`,
    // 0: not yet looked at by the roll-up; 1: folded into availability_hours (the report
    // reads it there); 2: kept as it is (an hour long or more: one row is already cheap).
    // Only closed stretches are rolled, so one closed later (after a restart, at its link
    // drop) is read as it stands until then.
    `ALTER TABLE presence_intervals ADD COLUMN rolled INTEGER NOT NULL DEFAULT 0`,
    `ALTER TABLE panel_intervals ADD COLUMN rolled INTEGER NOT NULL DEFAULT 0`,
    `CREATE INDEX presence_intervals_unrolled ON presence_intervals(screen_id, started_at) WHERE rolled = 0 AND ended_at IS NOT NULL`,
    `CREATE INDEX panel_intervals_unrolled ON panel_intervals(screen_id, started_at) WHERE rolled = 0 AND ended_at IS NOT NULL`,
  ],
} satisfies Migration
