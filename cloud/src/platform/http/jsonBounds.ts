// Bounds on JSON bodies, checked before schema validation so that no service ever sees a
// value it could not serialise: every field may nest at most MAX_JSON_DEPTH levels, and a
// free-form object field (creative `design`, signage template `definition`, app and alert
// rule `config`, any other open object) holds at most MAX_FREE_FORM_BYTES of JSON. Over
// either bound: 422 validation_error naming the field. The walk is iterative, so a body
// nested thousands of levels deep costs no stack.
// No string in a JSON body (value or key, at any depth) may hold the NUL character
// (U+0000): PostgreSQL text cannot store it and SQLite's can, so it is refused here, on
// both engines, with 422 validation_error naming the field, before any service sees it.
// Bytes that include 0x00 (a serial command) are sent as hex.
// A route whose config says `nulAllowed` (agent log lines, kept as JSON text) takes it.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { validation } from '../errors.js'

export const MAX_JSON_DEPTH = 32
export const MAX_FREE_FORM_BYTES = 256 * 1024

interface Frame {
  value: unknown
  depth: number
}

/** Approximate JSON size and nesting depth of `root`; stops early past the bounds. */
function measure(root: unknown, maxDepth: number, maxBytes: number): { depth: number; bytes: number; deepPath: string | null } {
  let bytes = 0
  let depth = 0
  const stack: (Frame & { path: string })[] = [{ value: root, depth: 0, path: '' }]
  while (stack.length) {
    const { value, depth: d, path } = stack.pop()!
    if (value === null || typeof value !== 'object') {
      bytes += typeof value === 'string' ? value.length + 2 : String(value).length
      continue
    }
    const level = d + 1
    if (level > depth) depth = level
    if (level > maxDepth) return { depth: level, bytes, deepPath: path }
    if (Array.isArray(value)) {
      bytes += 2 + value.length
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], depth: level, path: `${path}[${i}]` })
    } else {
      const entries = Object.entries(value as Record<string, unknown>)
      bytes += 2 + entries.length
      for (const [k, v] of entries) {
        bytes += k.length + 3
        stack.push({ value: v, depth: level, path: `${path}.${k}` })
      }
    }
    if (bytes > maxBytes) return { depth, bytes, deepPath: null }
  }
  return { depth, bytes, deepPath: null }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Throws 422 validation_error when `body` breaks the depth or free-form size bound. */
export function checkJsonBounds(body: unknown, where = 'body'): void {
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return
  // Only parsed JSON is walked: a raw byte body (an upload part) arrives as a stream.
  const proto = Object.getPrototypeOf(body)
  if (!Array.isArray(body) && proto !== Object.prototype && proto !== null) return
  if (!isPlainObject(body)) {
    const m = measure(body, MAX_JSON_DEPTH + 1, Number.POSITIVE_INFINITY)
    if (m.depth > MAX_JSON_DEPTH + 1) throw validation(`${where} nests deeper than ${MAX_JSON_DEPTH} levels.`)
    return
  }
  for (const [key, value] of Object.entries(body)) {
    if (value === null || typeof value !== 'object') continue
    const field = `${where}.${key}`
    const limitBytes = isPlainObject(value) ? MAX_FREE_FORM_BYTES : Number.POSITIVE_INFINITY
    const m = measure(value, MAX_JSON_DEPTH, limitBytes)
    if (m.depth > MAX_JSON_DEPTH) throw validation(`${field} nests deeper than ${MAX_JSON_DEPTH} levels (at ${field}${(m.deepPath ?? '').slice(0, 80)}…).`)
    if (m.bytes > limitBytes) throw validation(`${field} is larger than ${limitBytes} bytes of JSON.`)
  }
}

export const NUL_MESSAGE = 'must not contain the NUL character (U+0000).'

/** The path of the first string (value or key) in `root` that holds U+0000, or null. */
function nulPath(root: unknown, where: string): string | null {
  const stack: { value: unknown; path: string }[] = [{ value: root, path: where }]
  while (stack.length) {
    const { value, path } = stack.pop()!
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}[${i}]` })
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (k.includes('\u0000')) return `${path} (a field name)`
        stack.push({ value: v, path: `${path}.${k}` })
      }
    }
  }
  return null
}

/** Throws 422 validation_error when a string in the parsed JSON `body` holds U+0000. */
export function checkNoNul(body: unknown, where = 'body'): void {
  if (typeof body === 'string') {
    if (body.includes('\u0000')) throw validation(`${where} ${NUL_MESSAGE}`)
    return
  }
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return
  const proto = Object.getPrototypeOf(body)
  if (!Array.isArray(body) && proto !== Object.prototype && proto !== null) return
  const at = nulPath(body, where)
  if (at) throw validation(`${at.slice(0, 200)} ${NUL_MESSAGE}`)
}

export function installJsonBounds(app: FastifyInstance): void {
  // Callback style, and nothing to walk without a body (every GET): no promise per request.
  app.addHook('preValidation', (req: FastifyRequest, _reply, done) => {
    if (req.body === undefined || req.body === null) return done()
    try {
      checkJsonBounds(req.body)
      if (!req.routeOptions.config?.nulAllowed) checkNoNul(req.body)
    } catch (err) {
      return done(err as Error)
    }
    done()
  })
}
