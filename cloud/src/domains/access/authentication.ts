// Authentication, permission checks and the workspace rate limit, attached to every
// route that does not say `auth: 'none'`. Runs in onRequest, so a caller without a valid
// credential learns nothing about bodies or resources (401 before 422 or 404).
//
// It runs on every request, so it answers without waiting when it can: a credential whose
// principal is cached, a workspace row in memory and counters kept in memory (one
// instance) are all read at once and the hook calls `done` in the same turn. Whatever
// must be looked up (a database read, a Redis counter) is awaited as before; the checks
// and their order are the same on both paths.
import { timingSafeEqual } from 'node:crypto'
import type {} from '@fastify/cookie'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'
import { holds, type Permission } from '@svc/shared'
import { ApiError } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { setRateHeaders, type RateDecision } from '../../platform/http/rateLimit.js'
import { alreadyCounted } from '../../platform/http/innerRequests.js'
import { csrfFor } from './SignInService.js'
import { BEARER, bearerOrCookieToken, principalOfToken, SESSION_COOKIE } from './presentedCredential.js'
import type { Provisions } from '../../platform/provisions.js'

function tooMany(d: RateDecision, what: string, unit = 'requests'): ApiError {
  return new ApiError('rate_limited', `Over the rate limit of ${d.limit} ${unit} per ${d.windowSeconds} seconds ${what}; retry after ${d.resetSeconds} s.`, {
    extra: { limit: d.limit, windowSeconds: d.windowSeconds, retryAfterSeconds: d.resetSeconds },
    headers: { 'retry-after': String(d.resetSeconds) },
  })
}

/** `f(v)`, at once when `v` is a value, after it when `v` is a promise. */
function then<T, R>(v: T | Promise<T>, f: (v: T) => R | Promise<R>): R | Promise<R> {
  return v instanceof Promise ? v.then(f) : f(v)
}

/** The console's device cookie (SignInLimits.ts); the session cookie is in presentedCredential.ts. */
export const DEVICE_COOKIE = 'svc_device'
export { bearerOrCookieToken, SESSION_COOKIE }
/** The header carrying the session's CSRF token on writes made with the cookie. */
export const CSRF_HEADER = 'x-svc-csrf'
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * A write made with the session cookie must prove it comes from the console's own pages:
 * the session's CSRF token in CSRF_HEADER (a page of another origin can neither read it nor
 * set the header without a CORS grant, and none is given), and no browser saying it is
 * cross-site. A bearer credential needs none of this: a browser never adds it by itself.
 */
function checkCsrf(req: FastifyRequest, token: string): void {
  if (SAFE_METHODS.has(req.method)) return
  const site = req.headers['sec-fetch-site']
  const sent = req.headers[CSRF_HEADER]
  const expected = Buffer.from(csrfFor(token))
  const got = Buffer.from(typeof sent === 'string' ? sent : '')
  if (site === 'cross-site' || site === 'same-site' || got.length !== expected.length || !timingSafeEqual(got, expected))
    throw new ApiError(
      'forbidden',
      `A write made with the session cookie needs the session's CSRF token in the ${CSRF_HEADER} header (GET /v1/session answers it).`,
    )
}

/** What authentication needs of a route, read once when the route is added. */
interface RouteAuth {
  url: string
  signedAccess: boolean
  permission: Permission | undefined
  rootOnly: boolean
  perKeyLimit: number | undefined
}

export function installAuth(app: FastifyInstance, d: Pick<Provisions, 'apiKeys' | 'users' | 'oauth' | 'authFailures' | 'workspaces' | 'rateLimiter'>): void {
  app.decorateRequest('principal', null)

  /** The principal of a credential whose lookup is cached, without waiting (undefined otherwise). */
  function cachedPrincipal(token: string): Principal | undefined {
    const { apiKeys, users, oauth } = d
    if (token.startsWith('ak_')) return apiKeys.cachedPrincipal(token)
    if (token.startsWith('oat_')) return oauth.cachedPrincipal(token)
    if (token.startsWith('ust_')) return users.cachedPrincipal(token)
    return undefined
  }

  /** The principal behind `token` looked up (database), or null when it is refused. */
  function lookUp(token: string): Promise<Principal | null> | null {
    // A token refused a moment ago is refused again without a lookup.
    if (d.authFailures.knownBad(token)) return null
    return principalOfToken(d, token)
  }

  /** Every check of a request; undefined when it passed without waiting, else a promise of the same. */
  function check(route: RouteAuth, req: FastifyRequest, reply: FastifyReply): void | Promise<void> {
    // A signed URL (devices downloading media) is checked by the route itself.
    if (route.signedAccess && typeof (req.query as Record<string, unknown> | undefined)?.sig === 'string') return
    const header = req.headers.authorization
    let token: string
    if (header) {
      const m = BEARER.exec(header)
      if (!m) throw new ApiError('missing_credentials', 'The Authorization header must have the form "Bearer <token>".')
      token = m[1]!
    } else {
      // The console's session cookie: a session token only, and writes carry its CSRF token.
      const cookie = req.cookies?.[SESSION_COOKIE]
      if (!cookie) throw new ApiError('missing_credentials', 'Send a credential: Authorization: Bearer <API key, OAuth access token or session token>.')
      if (!cookie.startsWith('ust_')) throw new ApiError('invalid_credentials', 'The credential is unknown, revoked or expired.')
      checkCsrf(req, cookie)
      token = cookie
    }
    // A credential that authenticates is never held off, whatever else its address sent.
    const cached = cachedPrincipal(token)
    if (cached) return authorize(route, req, reply, cached)
    // Read before the lookup: a refusal decided before the refused tokens are forgotten is not remembered.
    const generation = d.authFailures.generation()
    return then(lookUp(token), (principal) => {
      if (principal) return authorize(route, req, reply, principal)
      // Only unknown tokens are counted, per address and token kind (platform/http/authFailures.ts).
      return d.authFailures.fail(req.ip, token, generation).then((d) => {
        if (!d.allowed) throw tooMany(d, 'from this address for unknown tokens of this kind', 'failed authentications')
        throw new ApiError('invalid_credentials', 'The credential is unknown, revoked or expired.')
      })
    })
  }

  /** The principal's workspace rate limit, the route's per-key limit, permission and pin. */
  function authorize(route: RouteAuth, req: FastifyRequest, reply: FastifyReply, principal: Principal): void | Promise<void> {
    req.principal = principal
    if (principal.actor.kind !== 'key') return permit(route, principal)
    const { workspaces, rateLimiter } = d
    return then(workspaces.cached(principal.workspaceId) ?? workspaces.require(principal.workspaceId), (ws) => {
      // A tool call of /v1/mcp runs its route as an inner request: the MCP request was counted.
      const counted = alreadyCounted(req) ? null : rateLimiter.hit(`ws:${ws.id}`, workspaces.rateLimitOf(ws), 60)
      return then(counted, (d) => {
        if (d) {
          setRateHeaders(reply, d)
          if (!d.allowed) throw tooMany(d, 'for this workspace')
        }
        if (!route.perKeyLimit) return permit(route, principal)
        return then(rateLimiter.hit(`key:${principal.actor.id}:${route.url}`, route.perKeyLimit, 60), (k) => {
          if (!k.allowed) throw tooMany(k, 'for this key on this route')
          return permit(route, principal)
        })
      })
    })
  }

  function permit(route: RouteAuth, principal: Principal): void {
    if (route.permission && !holds(principal.grant, route.permission)) {
      throw new ApiError('forbidden', `Missing permission: ${route.permission}`)
    }
    if (route.rootOnly && principal.nodeId !== null) {
      throw new ApiError('forbidden', 'This operation needs a workspace-wide credential; this one is pinned to a location.')
    }
  }

  /** The onRequest hook of one route: `done` in the same turn when nothing had to be awaited. */
  function authenticateFor(route: RouteAuth) {
    return function authenticate(req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
      let pending: void | Promise<void>
      try {
        pending = check(route, req, reply)
      } catch (err) {
        done(err as Error)
        return
      }
      if (pending === undefined) done()
      else pending.then(() => done(), done)
    }
  }

  app.addHook('onRoute', (route: RouteOptions) => {
    // The API is /v1; the console's files (and `/` leading to it) are public like any web page.
    if (route.config?.auth === 'none' || !route.url.startsWith('/v1/')) return
    const config = route.config ?? {}
    const auth = authenticateFor({
      url: route.url,
      signedAccess: Boolean(config.signedAccess),
      permission: config.permission,
      rootOnly: Boolean(config.rootOnly),
      perKeyLimit: config.perKeyLimit,
    })
    const existing = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : []
    route.onRequest = [auth, ...existing]
  })
}
