// CSV lines of the reports (RFC 4180, CRLF), safe to open in a spreadsheet.
import type { AvailabilityRowT } from './AvailabilityService.js'

export function csvField(v: unknown): string {
  if (v === null || v === undefined) return ''
  let s = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : JSON.stringify(v)
  // A spreadsheet must not take a text field for a formula (numbers are left as they are).
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`
}

const CSV_COLUMNS = [
  'id',
  'name',
  'screens',
  'windowSeconds',
  'onlineSeconds',
  'offlineSeconds',
  'availability',
  'outages',
  'longestOutageSeconds',
  'scheduledSeconds',
  'displaySeconds',
  'displayAvailability',
] as const satisfies readonly (keyof AvailabilityRowT)[]

/** A row as a CSV line, its first column named after what the rows are. */
export function availabilityCsvLine(r: AvailabilityRowT): string {
  return csvLine(CSV_COLUMNS.map((c) => r[c]))
}

export function availabilityCsvHeader(groupBy: string): string {
  return csvLine([groupBy === 'node' ? 'nodeId' : groupBy === 'group' ? 'groupId' : 'screenId', ...CSV_COLUMNS.slice(1)])
}
