// Request bodies, the same way on every operation:
// - A key named `__proto__`, or `prototype` inside `constructor`, is refused with 400
//   `bad_request` naming it (the parser never builds such an object).
// - JSON must be UTF-8: bytes that are not answer 400 `bad_request` saying so (Node's
//   decoder would otherwise swap them for U+FFFD and the length check would fail with a
//   confusing "size did not match Content-Length").
// - An error answer sent before the body was read through closes the connection (below),
//   lingering: what the client still sends is read and discarded for a bounded time, so it
//   reads the answer rather than a reset (lingeringClose.ts).
// - Objects in a body schema are closed: a field the operation does not know is refused
//   with the operation's validation error naming it (see docs/decisions.md), and the
//   document says `additionalProperties: false`. Objects that are free-form on purpose
//   say `additionalProperties: true` (or a schema) and are left open.
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors.js'
import { installLingeringClose, lingerAfterAnswer } from './lingeringClose.js'

const utf8 = new TextDecoder('utf-8', { fatal: true })

type Schema = Record<string, unknown>

/** Closes every object schema under `s` that does not say what to do with unknown fields. */
export function closeObjects(s: unknown, seen = new Set<unknown>()): void {
  if (!s || typeof s !== 'object' || seen.has(s)) return
  seen.add(s)
  const o = s as Schema
  if (o.type === 'object' && o.properties && o.additionalProperties === undefined && o.patternProperties === undefined) {
    o.additionalProperties = false
  }
  // allOf members each see the whole object: closing one would refuse the others' fields.
  if (Array.isArray(o.allOf)) return
  for (const key of ['properties', 'items', 'anyOf', 'oneOf']) {
    const v = o[key]
    if (Array.isArray(v)) v.forEach((x) => closeObjects(x, seen))
    else if (v && typeof v === 'object') {
      if (key === 'properties') for (const x of Object.values(v)) closeObjects(x, seen)
      else closeObjects(v, seen)
    }
  }
}

/**
 * The path (`body.a.__proto__`) of the first key the JSON parser refuses to build an
 * object from: `__proto__`, or `prototype` inside `constructor`; null when there is none,
 * or when `text` is not JSON at all. JSON.parse keeps such keys as plain own properties,
 * so reading them here changes no prototype.
 */
const short = (path: string): string => (path.length > 160 ? `${path.slice(0, 160)}…` : path)

export function forbiddenKey(text: string): string | null {
  let root: unknown
  try {
    root = JSON.parse(text)
  } catch {
    return null
  }
  const stack: { value: unknown; path: string }[] = [{ value: root, path: 'body' }]
  while (stack.length) {
    const { value, path } = stack.pop()!
    if (value === null || typeof value !== 'object') continue
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}[${i}]` })
      continue
    }
    for (const [k, v] of Object.entries(value)) {
      if (k === '__proto__') return `${short(path)}.__proto__`
      if (k === 'constructor' && v !== null && typeof v === 'object' && Object.hasOwn(v, 'prototype')) return `${short(path)}.constructor.prototype`
      stack.push({ value: v, path: `${path}.${k}` })
    }
  }
  return null
}

export function installBodyRules(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    let text: string
    try {
      text = utf8.decode(body as Buffer)
    } catch {
      done(new ApiError('bad_request', 'The body is not UTF-8 text; send JSON encoded as UTF-8.'), undefined)
      return
    }
    parseJson(req, text, (err, value) => {
      // The parser refuses `__proto__` and `constructor.prototype` keys as "not JSON":
      // when the text is JSON after all, the refusal names the key instead.
      const key = err ? forbiddenKey(text) : null
      if (key) return done(new ApiError('bad_request', `${key} is not accepted: no key may be named __proto__, nor constructor.prototype.`), undefined)
      done(err, value)
    })
  })
  app.addHook('onRoute', (route) => {
    if (route.schema?.body) closeObjects(route.schema.body)
  })
  // A refusal sent before the request's body was read through (over a size limit, or
  // refused before it was read at all) ends the connection: kept alive, the socket would
  // have to be read through the rest of that body before the next request, or would hang.
  // A 413 always closes. Fastify does the same for a JSON body it cannot parse.
  // The body's unread rest is read and discarded for a while after the answer (a lingering
  // close), so a client still writing reads the answer instead of a connection reset.
  installLingeringClose(app)
  app.addHook('onSend', (req, reply, payload, done) => {
    const unread = reply.statusCode >= 400 && hasBody(req.headers) && req.raw.complete === false
    if (reply.statusCode === 413 || unread) reply.header('connection', 'close')
    if (unread) lingerAfterAnswer(app, req)
    done(null, payload)
  })
}

/** Whether the request carries a body (chunked, or a Content-Length above 0). */
function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length']
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}
