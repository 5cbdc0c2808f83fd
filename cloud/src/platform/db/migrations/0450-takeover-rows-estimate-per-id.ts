import type { Migration } from './Migration.js'

// PostgreSQL only (SQLite's planner keeps no such statistics).
//
// The planner's estimate of how many takeover rows one cast (or emergency) has came from
// statistics taken when the table was small: after the first takeovers it believed one id
// matched every row, so "which live casts hold these screens" and the pause check read the
// whole history (a sequential scan, a hash of every row) instead of the cast's own rows
// through the primary key. A takeover answered slower with every takeover before it: at
// 10,000 screens 90 ms for the first, 230–400 ms by the seventh. The id columns now carry a
// fixed estimate, about 100 rows per id whatever the table holds, so a lookup by id goes
// through its index; ANALYZE makes it count at once.
export default {
  version: 450,
  name: 'takeover rows: a fixed row estimate per cast and emergency (PostgreSQL)',
  statements: (dialect) =>
    dialect === 'postgres'
      ? [
          `ALTER TABLE cast_screens ALTER COLUMN cast_id SET (n_distinct = -0.01)`,
          `ALTER TABLE emergency_screens ALTER COLUMN emergency_id SET (n_distinct = -0.01)`,
          `ANALYZE cast_screens`,
          `ANALYZE emergency_screens`,
        ]
      : [],
} satisfies Migration
