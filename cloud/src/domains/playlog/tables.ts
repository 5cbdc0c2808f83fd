// The playlog domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Defaulted } from '../../platform/db/schema.js'

/** Proof of play: one completed play a screen reported (see PlayLogRepository). */
export interface PlayLogTable {
  /** `play_` + a hash of the screen and the record: the same record always gets the same id. */
  id: string
  workspace_id: string
  screen_id: string
  source: string
  content_kind: string
  content_id: string
  cast_id: string | null
  emergency_id: string | null
  item_kind: string
  item_id: string
  zone: string | null
  /** UTC ISO 8601 with milliseconds, so text order is time order. */
  started_at: string
  ended_at: string
  duration_ms: number
  received_at: string
  /** `on`, `off` or `unknown`: the panel's power when the play started (proof of display). */
  panel_power: Defaulted<string>
}

/** Proof of display at volume: one screen's plays of one content in one UTC day or hour (see PlayLogRepository). */
export interface PlayLogTotalsTable {
  workspace_id: string
  /** The day (`YYYY-MM-DD`) or hour (`YYYY-MM-DDTHH`, UTC) the plays started. */
  period: string
  content_kind: string
  content_id: string
  screen_id: string
  plays: number
  duration_ms: number
  /** Milliseconds of those plays that started with the panel on. */
  panel_on_ms: number
}

declare module '../../platform/db/schema.js' {
  interface DB {
    play_log: PlayLogTable
    play_log_daily: PlayLogTotalsTable
    play_log_hourly: PlayLogTotalsTable
  }
}
