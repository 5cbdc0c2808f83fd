// The reports domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Generated } from 'kysely'

/** The panel's history: one stretch of the same read-back power and playing state (ReportsRepository). */
export interface PanelIntervalsTable {
  workspace_id: string
  screen_id: string
  /** UTC ISO with milliseconds: when the report that began it arrived. */
  started_at: string
  /** When a report with another state arrived; null while it lasts. */
  ended_at: string | null
  /** `on`, `off` or `unknown`, as the player read the panel back. */
  power: string
  /** 1 when the player was playing content (its `playing.source` not `none`). */
  playing: number
  /** 1 when the panel was not read back off and content played. */
  showing: number
  /** Whether the hourly roll-up has folded it in (0 no, 1 yes, 2 kept as it is). */
  rolled: Generated<number>
}

/** Hourly roll-ups: per screen and UTC hour, the short closed stretches that fell in it (AvailabilityRollup). */
export interface AvailabilityHoursTable {
  workspace_id: string
  screen_id: string
  /** The hour's start, UTC ISO with milliseconds. */
  hour: string
  /** JSON [[start, end], …] in epoch ms: online inside the hour, from rolled presence stretches. */
  online: string
  /** The same, of the panel showing content. */
  showing: string
}

/** Reports mailed on a cadence (ReportSubscriptions). */
export interface ReportSubscriptionsTable {
  id: string
  workspace_id: string
  /** `availability` or `proof-of-play`. */
  report: string
  /** JSON of the report's query (groupBy, nodeId, groupId, contentKind, contentId). */
  params: string
  /** `weekly` or `monthly`. */
  cadence: string
  /** JSON array of e-mail addresses. */
  recipients: string
  /** The creating credential's pinned location (its reach); null = the whole workspace. */
  scope_node_id: string | null
  created_by: string
  created_at: string
  /** When it is next due: the end of the next period (UTC ISO). */
  next_run_at: string
  last_sent_at: string | null
}

declare module '../../platform/db/schema.js' {
  interface DB {
    panel_intervals: PanelIntervalsTable
    availability_hours: AvailabilityHoursTable
    report_subscriptions: ReportSubscriptionsTable
  }
}
