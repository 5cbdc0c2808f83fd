// Request ids: a caller's `x-svc-request-id` is used when it is well formed (letters,
// digits, `.`, `_`, `-`, at most 120 characters); otherwise, or when absent, the
// service makes one. Either way it is echoed on the response and tags the logs.
import type { IncomingMessage } from 'node:http'
import { randomUUID } from 'node:crypto'

export const REQUEST_ID_HEADER = 'x-svc-request-id'
const VALID = /^[A-Za-z0-9._-]{1,120}$/

export function isValidRequestId(v: unknown): v is string {
  return typeof v === 'string' && VALID.test(v)
}

export function genRequestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER]
  return isValidRequestId(given) ? given : `req_${randomUUID().replace(/-/g, '')}`
}
