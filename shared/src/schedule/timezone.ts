// Wall-clock <-> instant conversion for IANA time zones, built only on
// Intl.DateTimeFormat (no tz database dependency). Owns the DST policy used by
// schedule evaluation: a local time inside a spring-forward gap resolves to the
// first instant after the gap; an ambiguous local time (fall-back) resolves to
// its first occurrence.

export const MINUTE_MS = 60_000
export const DAY_MS = 86_400_000

const formatters = new Map<string, Intl.DateTimeFormat>()
const validity = new Map<string, boolean>()

/** True when the runtime's ICU knows this IANA zone name (e.g. `Europe/London`, `UTC`). */
export function isValidTimeZone(timeZone: unknown): timeZone is string {
  if (typeof timeZone !== 'string' || timeZone.length === 0) return false
  const known = validity.get(timeZone)
  if (known !== undefined) return known
  let ok: boolean
  try {
    formatterFor(timeZone)
    ok = true
  } catch {
    ok = false
  }
  if (validity.size > 1000) validity.clear()
  validity.set(timeZone, ok)
  return ok
}

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formatters.set(timeZone, f)
  }
  return f
}

/**
 * The local wall-clock reading at `epochMs`, expressed as milliseconds of a
 * UTC-based "local epoch" (Date.UTC of the local fields), seconds precision
 * plus the instant's own milliseconds.
 */
export function localMsAt(epochMs: number, timeZone: string): number {
  return epochMs + offsetMsAt(epochMs, timeZone)
}

/** The local reading at `epochMs` as ICU formats it (one `formatToParts`, a few µs). */
function readLocalMs(epochMs: number, timeZone: string): number {
  const parts = formatterFor(timeZone).formatToParts(new Date(epochMs))
  let y = 0,
    mo = 1,
    d = 1,
    h = 0,
    mi = 0,
    s = 0
  for (const p of parts) {
    switch (p.type) {
      case 'year':
        y = Number(p.value)
        break
      case 'month':
        mo = Number(p.value)
        break
      case 'day':
        d = Number(p.value)
        break
      case 'hour':
        h = Number(p.value) % 24
        break // some ICU builds print 24 at midnight
      case 'minute':
        mi = Number(p.value)
        break
      case 'second':
        s = Number(p.value)
        break
      default:
        break
    }
  }
  const ms = ((epochMs % 1000) + 1000) % 1000
  return Date.UTC(y, mo - 1, d, h, mi, s) + ms
}

/**
 * A zone's offset is the same for hours on end: it changes only at its transitions, months
 * apart. So offsets are kept per UTC hour: an hour whose first and last millisecond have the
 * same offset has that offset throughout (no zone has changed its offset twice within an
 * hour), and an hour with a transition in it is read instant by instant. Schedule
 * evaluation asks for the same few hours again and again (each day's edges, on every
 * evaluation of the player and every report), and one ICU read costs several µs.
 */
const HOUR_MS = 60 * MINUTE_MS
const MAX_KEPT_HOURS = 100_000
const offsetsByZone = new Map<string, Map<number, number>>()
let keptHours = 0

/** UTC offset (local minus UTC) in milliseconds at an instant. */
export function offsetMsAt(epochMs: number, timeZone: string): number {
  const hour = Math.floor(epochMs / HOUR_MS)
  let kept = offsetsByZone.get(timeZone)
  const hit = kept?.get(hour)
  if (hit !== undefined) return hit
  const start = hour * HOUR_MS
  const first = readLocalMs(start, timeZone) - start
  const last = readLocalMs(start + HOUR_MS - 1, timeZone) - (start + HOUR_MS - 1)
  if (first !== last) return readLocalMs(epochMs, timeZone) - epochMs
  if (keptHours >= MAX_KEPT_HOURS) {
    offsetsByZone.clear()
    keptHours = 0
    kept = undefined
  }
  if (!kept) offsetsByZone.set(timeZone, (kept = new Map()))
  kept.set(hour, first)
  keptHours++
  return first
}

const resolved = new Map<string, number>()

/**
 * The instant at which the wall clock of `timeZone` reads `localMs`
 * (a Date.UTC-style value of the local fields).
 *
 * - Gap (spring forward): the first instant after the gap, i.e. the transition.
 * - Overlap (fall back): the first occurrence.
 */
export function instantOfLocal(localMs: number, timeZone: string): number {
  const key = `${timeZone}|${localMs}`
  const hit = resolved.get(key)
  if (hit !== undefined) return hit
  const value = resolveLocal(localMs, timeZone)
  // The cache only makes repeated evaluation cheap; it never changes answers.
  if (resolved.size > 20_000) resolved.clear()
  resolved.set(key, value)
  return value
}

function resolveLocal(localMs: number, timeZone: string): number {
  // Transitions are months apart, so the offsets a day either side are the
  // only two that can apply to this wall-clock time.
  const before = offsetMsAt(localMs - DAY_MS, timeZone)
  const after = offsetMsAt(localMs + DAY_MS, timeZone)
  let best: number | null = null
  for (const off of before === after ? [before] : [before, after]) {
    const t = localMs - off
    if (offsetMsAt(t, timeZone) === off && (best === null || t < best)) best = t
  }
  if (best !== null) return best
  // In a gap: the transition lies between the two readings. Binary search
  // (whole seconds) for the first instant already on the later offset.
  let lo = Math.floor((localMs - Math.max(before, after)) / 1000) // still old offset
  let hi = Math.ceil((localMs - Math.min(before, after)) / 1000) // already new offset
  if (offsetMsAt(hi * 1000, timeZone) !== after) return localMs - before
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2)
    if (offsetMsAt(mid * 1000, timeZone) === after) hi = mid
    else lo = mid
  }
  return hi * 1000
}

/** Local calendar day number (days since 1970-01-01 in local time) of an instant. */
export function localDayAt(epochMs: number, timeZone: string): number {
  return Math.floor(localMsAt(epochMs, timeZone) / DAY_MS)
}

/** 0 = Sunday … 6 = Saturday, for a local day number. */
export function weekdayOfDay(day: number): number {
  return (((day + 4) % 7) + 7) % 7 // 1970-01-01 was a Thursday
}

/** Day number of a `YYYY-MM-DD` string, or null when it is not a real calendar date. */
export function dayOfIsoDate(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (!m) return null
  const y = Number(m[1]),
    mo = Number(m[2]),
    d = Number(m[3])
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return null
  const ms = Date.UTC(y, mo - 1, d)
  const back = new Date(ms)
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null
  return Math.floor(ms / DAY_MS)
}

/** Minutes after midnight for `HH:MM` (00:00–23:59; `24:00` only when allowed), or null. */
export function minutesOfClock(text: string, allow2400 = false): number | null {
  const m = /^(\d{2}):(\d{2})$/.exec(text)
  if (!m) return null
  const h = Number(m[1]),
    mi = Number(m[2])
  if (allow2400 && h === 24 && mi === 0) return 1440
  if (h > 23 || mi > 59) return null
  return h * 60 + mi
}
