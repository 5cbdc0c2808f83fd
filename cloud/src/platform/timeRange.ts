// Time windows in query strings (`from`, `to`): ISO 8601 date-times (or dates), with a
// zone when a time is given, answered as UTC ISO strings. A 422 names the bad field.
import { validation } from './errors.js'

export interface TimeRange {
  /** Inclusive lower bound (UTC ISO), or null when not given. */
  from: string | null
  /** Exclusive upper bound (UTC ISO), or null when not given. */
  to: string | null
}

const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/

/** `from` and `to` of a query, checked; `to` may not be before `from`. */
export function parseTimeRange(q: { from?: string; to?: string }): TimeRange {
  const one = (name: string, v: string | undefined): string | null => {
    if (v === undefined || v === '') return null
    const ms = ISO.test(v) ? Date.parse(v) : Number.NaN
    if (!Number.isFinite(ms)) throw validation(`${name} must be an ISO 8601 date-time such as 2026-01-31T00:00:00Z.`)
    return new Date(ms).toISOString()
  }
  const range = { from: one('from', q.from), to: one('to', q.to) }
  if (range.from && range.to && range.to < range.from) throw validation('to is before from.')
  return range
}
