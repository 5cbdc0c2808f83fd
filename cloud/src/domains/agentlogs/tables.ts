// The agentlogs domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.

/** Requests for a screen's recent log lines and what its agent uploaded (domains/agentlogs). */
export interface AgentLogsTable {
  /** `alog_…` */
  id: string
  workspace_id: string
  screen_id: string
  /** pending → done (uploaded) | failed (the agent's reason) | expired (no answer within the TTL) */
  state: string
  reason: string | null
  /** The most lines asked for (the newest). */
  max_lines: number
  /** Only lines at or after this time; null = any. */
  since: string | null
  requested_at: string
  /** When the device acknowledged the job. */
  sent_at: string | null
  /** When the state left `pending`. */
  completed_at: string | null
  uploaded_at: string | null
  line_count: number | null
  /** 1 when the agent held more matching lines than it sent. */
  truncated: number | null
  size_bytes: number | null
  /** The uploaded lines, a JSON array of {at, level, source, message}, oldest first. */
  lines: string | null
}

declare module '../../platform/db/schema.js' {
  interface DB {
    agent_logs: AgentLogsTable
  }
}
