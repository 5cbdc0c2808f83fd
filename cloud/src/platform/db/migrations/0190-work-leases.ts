import type { Migration } from './Migration.js'

export default {
  version: 190,
  name: 'work leases',
  statements: [
    // Work that must run once per cloud (status measurement, housekeeping, alert
    // evaluation, media URL refresh): the instance named in `holder` runs it until
    // `expires_at`; it renews on every run, and another instance takes over once it lapses.
    `CREATE TABLE work_leases (
      name TEXT PRIMARY KEY,
      holder TEXT NOT NULL,
      expires_at TEXT NOT NULL
    )`,
  ],
} satisfies Migration
