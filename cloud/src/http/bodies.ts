// Request bodies, the same way on every operation:
// - JSON must be UTF-8: bytes that are not answer 400 `bad_request` saying so (Node's
//   decoder would otherwise swap them for U+FFFD and the length check would fail with a
//   confusing "size did not match Content-Length").
// - Objects in a body schema are closed: a field the operation does not know is refused
//   with the operation's validation error naming it (see docs/decisions.md), and the
//   document says `additionalProperties: false`. Objects that are free-form on purpose
//   say `additionalProperties: true` (or a schema) and are left open.
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors.js'

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
    parseJson(req, text, done)
  })
  app.addHook('onRoute', (route) => {
    if (route.schema?.body) closeObjects(route.schema.body)
  })
}
