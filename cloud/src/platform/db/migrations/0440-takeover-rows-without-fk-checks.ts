import type { Migration } from './Migration.js'

// A takeover at fleet size writes one cast_screens / emergency_screens row per screen in the
// request. On PostgreSQL the foreign key on the parent id was checked row by row (a trigger
// per inserted row: 60–180 ms for 10,000 rows, more than the insert itself); the rows are only
// ever written by CastRepository / EmergencyRepository in the transaction that inserts their
// parent, and parents are never deleted, so the check is dropped there. On SQLite it costs
// little (an in-process primary-key probe) and dropping it would mean rebuilding the table, so
// it stays.
//
// Which screens a cast still holds is derived (a row of a newer cast on the same screen takes
// it; docs/decisions.md "Takeover rows: which screens a cast holds"), so a screen's rows are read by screen, newest cast
// first: (screen_id, cast_id) replaces the (screen_id, state) index.
export default {
  version: 440,
  name: 'takeover rows: no per-row foreign-key check on PostgreSQL, cast rows indexed by screen and cast',
  statements: (dialect) => [
    ...(dialect === 'postgres'
      ? [
          `ALTER TABLE cast_screens DROP CONSTRAINT IF EXISTS cast_screens_cast_id_fkey`,
          `ALTER TABLE emergency_screens DROP CONSTRAINT IF EXISTS emergency_screens_emergency_id_fkey`,
        ]
      : []),
    `CREATE INDEX cast_screens_screen_cast ON cast_screens(screen_id, cast_id)`,
    `DROP INDEX cast_screens_screen`,
  ],
} satisfies Migration
