// Request ids: a caller's `x-svc-request-id` is used when it is well formed (letters,
// digits, `.`, `_`, `-`, at most 120 characters); otherwise, or when absent, the
// service makes one. Either way it is echoed on the response and tags the logs.
import type { IncomingMessage } from 'node:http'
import { randomBytes } from 'node:crypto'

export const REQUEST_ID_HEADER = 'x-svc-request-id'
const VALID = /^[A-Za-z0-9._-]{1,120}$/

export function isValidRequestId(v: unknown): v is string {
  return typeof v === 'string' && VALID.test(v)
}

// Ids are 128 random bits (32 hex digits) taken from a pool filled 256 ids at a time: one
// call into the random source per 256 requests instead of one per request.
const ID_BYTES = 16
let pool = Buffer.alloc(0)
let offset = 0

function randomId(): string {
  if (offset >= pool.length) {
    pool = randomBytes(ID_BYTES * 256)
    offset = 0
  }
  const id = pool.toString('hex', offset, offset + ID_BYTES)
  offset += ID_BYTES
  return `req_${id}`
}

export function genRequestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER]
  return given !== undefined && isValidRequestId(given) ? given : randomId()
}
