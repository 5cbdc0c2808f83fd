// Time windows in query strings and bodies (`from`, `to`): RFC 3339 date-times, a time
// zone included (`format: date-time` in the document, checked with the same validator the
// schemas use), answered as UTC ISO strings. A 422 names the bad field.
import { Type } from '@sinclair/typebox'
import { fullFormats } from 'ajv-formats/dist/formats.js'
import { validation } from './errors.js'

export interface TimeRange {
  /** Inclusive lower bound (UTC ISO), or null when not given. */
  from: string | null
  /** Exclusive upper bound (UTC ISO), or null when not given. */
  to: string | null
}

/** What a `from`/`to` field must be, in a message. */
export const DATE_TIME_HINT = 'must be an ISO 8601 date-time with a time zone, such as 2026-01-31T00:00:00Z'

/** A `from`/`to` field of a route's schema: a date-time, as the document declares it. */
export const DateTimeField = (description: string) => Type.String({ format: 'date-time', maxLength: 64, description })

const dateTime = fullFormats['date-time'] as { validate: (s: string) => boolean }

/** `from` and `to` of a query, checked; `to` may not be before `from`. */
export function parseTimeRange(q: { from?: string; to?: string }): TimeRange {
  const one = (name: string, v: string | undefined): string | null => {
    if (v === undefined || v === '') return null
    // The format accepts a leap second (23:59:60), which no Date holds.
    const ms = dateTime.validate(v) ? Date.parse(v) : Number.NaN
    if (!Number.isFinite(ms)) throw validation(`${name} ${DATE_TIME_HINT}.`)
    return new Date(ms).toISOString()
  }
  const range = { from: one('from', q.from), to: one('to', q.to) }
  if (range.from && range.to && range.to < range.from) throw validation('to is before from.')
  return range
}
