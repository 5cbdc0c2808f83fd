// What a presented token (API key, OAuth access token, session token) stands for now, and
// which credential it counts as. Authentication looks a token up this way on every request;
// a long-lived response (an event stream) asks again when credentials change, so it ends
// when its token stops being valid.
import type {} from '@fastify/cookie'
import type { FastifyRequest } from 'fastify'
import type { Principal } from '../../platform/http/Principal.js'
import type { ApiKeyService } from './ApiKeyService.js'
import type { OAuthService } from './OAuthService.js'
import type { UserService } from './UserService.js'

export const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i

/** The console's session cookie (a `ust_…` session token). */
export const SESSION_COOKIE = 'svc_session'

/** The token a request presents: its bearer, else its session cookie (undefined: neither). */
export function bearerOrCookieToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization
  if (header) return BEARER.exec(header)?.[1]
  return req.cookies?.[SESSION_COOKIE]
}

export interface TokenLookups {
  apiKeys: Pick<ApiKeyService, 'authenticate'>
  users: Pick<UserService, 'authenticate'>
  oauth: Pick<OAuthService, 'authenticate'>
}

/** The principal behind `token` (cached for a few seconds, dropped by every credential change), or null when refused. */
export function principalOfToken(d: TokenLookups, token: string): Promise<Principal | null> | null {
  if (token.startsWith('ak_')) return d.apiKeys.authenticate(token)
  if (token.startsWith('ust_')) return d.users.authenticate(token)
  if (token.startsWith('oat_')) return d.oauth.authenticate(token)
  return null
}
