// Inner requests: a route of the API run by another route (app.inject) with the caller's own
// credential, so its checks (permission, pin, tenancy, validation, idempotency) apply
// unchanged. The MCP endpoint runs each tool call this way; the timeline preview runs the
// write it previews as a dry run.
//
// The outer request was already counted against the workspace's rate limit; the inner one
// carries a ticket saying so, and authentication does not count it again. A ticket is 192
// random bits that live only while the inner request runs, in this process. A dry-run
// ticket also carries where the write's route puts its plan instead of writing.
import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'

export const INNER_REQUEST_HEADER = 'x-svc-inner-request'

/** Where a route asked for a dry run leaves what it would do; `plan` stays null if it does not know how. */
export class DryRun {
  plan: unknown = null
}

interface Ticket {
  counted: boolean
  dryRun: DryRun | null
  /** The way the outer request came by, for the audit log (`mcp` for a tool call). */
  origin: string | null
}

const open = new Map<string, Ticket>()

export interface InnerRequest {
  /** The header value the inner request carries. */
  ticket: string
  dryRun: DryRun | null
  close(): void
}

export function openInnerRequest(options: { dryRun?: boolean; origin?: string } = {}): InnerRequest {
  const ticket = randomBytes(24).toString('base64url')
  const dryRun = options.dryRun ? new DryRun() : null
  open.set(ticket, { counted: false, dryRun, origin: options.origin ?? null })
  return { ticket, dryRun, close: () => open.delete(ticket) }
}

function ticketOf(req: FastifyRequest): Ticket | null {
  const value = req.headers[INNER_REQUEST_HEADER]
  return typeof value === 'string' ? (open.get(value) ?? null) : null
}

/** True (once) for an inner request whose outer request was already counted. */
export function alreadyCounted(req: FastifyRequest): boolean {
  const t = ticketOf(req)
  if (!t || t.counted) return false
  t.counted = true
  return true
}

/** True for a request another route runs (a tool call, a preview, the audit log's reads). */
export function isInnerRequest(req: FastifyRequest): boolean {
  return ticketOf(req) !== null
}

/** The way an inner request's outer request came by (`mcp`), or null. */
export function innerOriginOf(req: FastifyRequest): string | null {
  return ticketOf(req)?.origin ?? null
}

/** The dry run this request was asked for, or null for a real request. */
export function dryRunOf(req: FastifyRequest): DryRun | null {
  return ticketOf(req)?.dryRun ?? null
}

/**
 * In a write's handler: for a dry run, runs `plan` (the write's own checks, writing
 * nothing), leaves its answer for the outer request and answers 204; false for a real request.
 */
export async function dryRan(req: FastifyRequest, reply: FastifyReply, plan: () => Promise<unknown>): Promise<boolean> {
  const dry = dryRunOf(req)
  if (!dry) return false
  dry.plan = await plan()
  await reply.code(204).send()
  return true
}
