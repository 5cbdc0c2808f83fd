// The devicelink domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Generated } from 'kysely'

/** Presence as intervals: a screen's connected stretch, written with the status change it follows (ScreenPresenceRepository). */
export interface PresenceIntervalsTable {
  workspace_id: string
  screen_id: string
  /** When it went online (UTC ISO with milliseconds). */
  started_at: string
  /** When its link dropped; null while it lasts. */
  ended_at: string | null
  /** Whether the reports' hourly roll-up has folded it in (0 no, 1 yes, 2 kept as it is). */
  rolled: Generated<number>
}

declare module '../../platform/db/schema.js' {
  interface DB {
    presence_intervals: PresenceIntervalsTable
  }
}
