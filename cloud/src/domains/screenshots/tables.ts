// The screenshots domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.

/** A screenshot job and, once the agent uploaded it, its PNG (bytes in the media store by sha256). */
export interface ScreenshotsTable {
  /** `shot_…` */
  id: string
  workspace_id: string
  screen_id: string
  /** queued → sent (the device holds the job) → ok | failed */
  status: string
  reason: string | null
  sha256: string | null
  size_bytes: number | null
  width: number | null
  height: number | null
  /** `display` (the compositor's output) or `page` (the player page rendered); null until uploaded, and on rows from before the column. */
  source: string | null
  created_at: string
  sent_at: string | null
  completed_at: string | null
}

declare module '../../platform/db/schema.js' {
  interface DB {
    screenshots: ScreenshotsTable
  }
}
