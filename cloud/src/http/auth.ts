// Authentication, permission checks and the workspace rate limit, attached to every
// route that does not say `auth: 'none'`. Runs in onRequest, so a caller without a valid
// credential learns nothing about bodies or resources (401 before 422 or 404).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { holds } from '@svc/shared'
import { ApiError } from '../errors.js'
import { rateHeaders, type RateDecision } from './rateLimit.js'
import { countedByMcp } from '../mcp/internalCalls.js'

function tooMany(d: RateDecision, what: string, unit = 'requests'): ApiError {
  return new ApiError('rate_limited', `Over the rate limit of ${d.limit} ${unit} per ${d.windowSeconds} seconds ${what}; retry after ${d.resetSeconds} s.`, {
    extra: { limit: d.limit, windowSeconds: d.windowSeconds, retryAfterSeconds: d.resetSeconds },
    headers: { 'retry-after': String(d.resetSeconds) },
  })
}

export function installAuth(app: FastifyInstance): void {
  app.decorateRequest('principal', null)

  async function authenticate(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { apiKeys, users, oauth, workspaces, rateLimiter, authFailures: failures } = app.services
    const config0 = req.routeOptions.config
    // A signed URL (devices downloading media) is checked by the route itself.
    if (config0.signedAccess && typeof (req.query as Record<string, unknown> | undefined)?.sig === 'string') return
    const header = req.headers.authorization
    if (!header) throw new ApiError('missing_credentials', 'Send a credential: Authorization: Bearer <API key, OAuth access token or session token>.')
    const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header)
    if (!m) throw new ApiError('missing_credentials', 'The Authorization header must have the form "Bearer <token>".')
    const token = m[1]!
    // An address that keeps presenting bad credentials is held off without a lookup.
    const gate = await failures.check(req.ip)
    if (!gate.allowed) throw tooMany(gate, 'from this address', 'failed authentications')
    const principal = failures.knownBad(token)
      ? null
      : token.startsWith('ak_')
        ? await apiKeys.authenticate(token)
        : token.startsWith('ust_')
          ? await users.authenticate(token)
          : token.startsWith('oat_')
            ? await oauth.authenticate(token)
            : null
    if (!principal) {
      await failures.fail(req.ip, token)
      throw new ApiError('invalid_credentials', 'The credential is unknown, revoked or expired.')
    }
    req.principal = principal
    const config = req.routeOptions.config

    if (principal.actor.kind === 'key') {
      const ws = await workspaces.require(principal.workspaceId)
      // A tool call of /v1/mcp runs its route as an inner request: the MCP request was counted.
      if (!countedByMcp(req)) {
        const d = await rateLimiter.hit(`ws:${ws.id}`, workspaces.rateLimitOf(ws), 60)
        reply.headers(rateHeaders(d))
        if (!d.allowed) throw tooMany(d, 'for this workspace')
      }
      if (config.perKeyLimit) {
        const k = await rateLimiter.hit(`key:${principal.actor.id}:${req.routeOptions.url}`, config.perKeyLimit, 60)
        if (!k.allowed) throw tooMany(k, 'for this key on this route')
      }
    }
    if (config.permission && !holds(principal.grant, config.permission)) {
      throw new ApiError('forbidden', `Missing permission: ${config.permission}`)
    }
    if (config.rootOnly && principal.nodeId !== null) {
      throw new ApiError('forbidden', 'This operation needs a workspace-wide credential; this one is pinned to a location.')
    }
  }

  app.addHook('onRoute', (route) => {
    if (route.config?.auth === 'none') return
    const existing = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : []
    route.onRequest = [authenticate, ...existing]
  })
}
