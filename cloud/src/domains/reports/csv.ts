// CSV lines of the reports (RFC 4180, CRLF), safe to open in a spreadsheet.

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
