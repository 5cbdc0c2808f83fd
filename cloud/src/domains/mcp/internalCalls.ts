// A tool call of the MCP endpoint runs its route as an inner request (app.inject) with the
// caller's own credential, so the route's checks apply unchanged. The MCP request that
// carried the call was already counted against the workspace's rate limit; the inner
// request carries a one-time ticket saying so, and authentication does not count it again.
// A ticket is 192 random bits that live only while the inner request runs, in this process.
import { randomBytes } from 'node:crypto'
import type { FastifyRequest } from 'fastify'

export const INTERNAL_CALL_HEADER = 'x-svc-mcp-call'

const open = new Set<string>()

export function openTicket(): string {
  const ticket = randomBytes(24).toString('base64url')
  open.add(ticket)
  return ticket
}

export function closeTicket(ticket: string): void {
  open.delete(ticket)
}

/** True (once) for an inner request the MCP endpoint made and has already counted. */
export function countedByMcp(req: FastifyRequest): boolean {
  const ticket = req.headers[INTERNAL_CALL_HEADER]
  return typeof ticket === 'string' && open.delete(ticket)
}
