// Field-level changes between a resource's representation before and after a write, with
// secrets masked: a field whose name says it holds a password, secret, token, key or invite link shows
// `•••` (and whether it was set), never its value.
import type { AuditChange } from './types.js'

export const MASK = '•••'
/** A field named like this holds a secret: its values are masked, whatever their depth. */
const SECRET_FIELD = /password|secret|token|key$|credential|inviteurl/i
/** At most this many changes per entry (the rest are summarised as one `…` change). */
export const MAX_CHANGES = 200
/** Strings longer than this are cut (an entry stays small whatever the resource holds). */
const MAX_STRING = 1000

export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name)
}

function clip(v: unknown): unknown {
  if (typeof v === 'string' && v.length > MAX_STRING) return `${v.slice(0, MAX_STRING)}…`
  return v
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Leaves of a JSON value by dotted path; arrays are leaves (compared whole), secrets masked. */
function flatten(v: unknown, prefix: string, out: Map<string, unknown>, secret: boolean): void {
  if (isObject(v)) {
    const keys = Object.keys(v)
    if (keys.length === 0 && prefix) out.set(prefix, secret ? MASK : {})
    for (const k of keys) flatten(v[k], prefix ? `${prefix}.${k}` : k, out, secret || isSecretField(k))
    return
  }
  if (!prefix) return
  out.set(prefix, secret && v !== null && v !== undefined ? MASK : maskDeep(v))
}

/** Secrets inside array items are masked too. */
function maskDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(maskDeep)
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, isSecretField(k) && x !== null ? MASK : maskDeep(x)]))
  return clip(v)
}

/** JSON.stringify(v) === 'null' for a JSON value, without writing it. */
function isJsonNull(v: unknown): boolean {
  return v === null || (typeof v === 'number' && !Number.isFinite(v))
}

/** The changed fields from `before` to `after` (null = the resource did not exist / no longer exists). */
export function diff(before: unknown, after: unknown): AuditChange[] {
  const b = new Map<string, unknown>()
  flatten(after, '', b, false)
  const changes: AuditChange[] = []
  if (!isObject(before)) {
    // Nothing before (a create): every leaf of after that holds something.
    for (const [path, y] of b) if (!isJsonNull(y)) changes.push({ path, before: null, after: y ?? null })
  } else {
    const a = new Map<string, unknown>()
    flatten(before, '', a, false)
    for (const path of new Set([...a.keys(), ...b.keys()])) {
      const x = a.has(path) ? a.get(path) : null
      const y = b.has(path) ? b.get(path) : null
      if (JSON.stringify(x) === JSON.stringify(y)) continue
      // A secret that was set and still is, masked on both sides, changed all the same when its stored value did.
      changes.push({ path, before: x ?? null, after: y ?? null })
    }
  }
  if (changes.length > MAX_CHANGES) {
    const kept = changes.slice(0, MAX_CHANGES)
    kept.push({ path: '…', before: null, after: `${changes.length - MAX_CHANGES} more changes` })
    return kept
  }
  return changes
}

/** A request body's fields as changes from nothing (what a write without a readable resource sent), secrets masked. */
export function sent(body: unknown): AuditChange[] {
  return isObject(body) ? diff(null, body) : []
}
