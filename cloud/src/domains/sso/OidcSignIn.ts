// OpenID Connect sign-in, with openid-client as the relying party: the authorization-code
// flow with PKCE (S256), `state` and `nonce`; the provider found through its discovery
// document, the ID token checked against its published keys (JWKS), its issuer, audience,
// expiry (60 s of clock tolerance) and nonce. Every request to the provider goes through the
// outbound address checks (https, public addresses; the test-only allow-list and CA of the
// webhooks cover providers too).
//
// start(): a flow row (the state as a hash, nonce, PKCE verifier, 10 minutes, one use) and the
// provider's authorization URL; the browser also gets the state in a cookie, and the callback
// needs both, so a code cannot be planted in someone else's browser (login CSRF).
// callback(): takes the flow (once), exchanges the code, reads `email` (it must be of a
// claimed domain and not `email_verified: false`), `name` and the role claim, makes or updates
// the user (UserService.vouched) and opens a session.
import { timingSafeEqual } from 'node:crypto'
import * as oidc from 'openid-client'
import { fetch as undiciFetch, type RequestInit } from 'undici'
import type { Clock, RandomSource } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { ApiError } from '../../platform/errors.js'
import type { OutboundGuard } from '../../platform/net/OutboundGuard.js'
import { hashSecret, randomToken } from '../../platform/secrets.js'
import type { SignedIn, SignInService, UserService } from '../access/index.js'
import type { WorkspaceService } from '../account/index.js'
import { mappedRole, type Provider, type SsoService } from './SsoService.js'
import { SsoRepository } from './SsoRepository.js'

export const FLOW_TTL_MS = 10 * 60_000
export const STATE_COOKIE = 'svc_sso_state'

/** What a sign-in through the provider came to: each one, good or refused, is told to the listeners (the audit log). */
export interface SsoSignInEvent {
  workspaceId: string | null
  protocol: 'oidc' | 'saml'
  outcome: 'success' | 'failure'
  userId: string | null
  email: string | null
  /** Why it was refused. */
  reason: string | null
  ip: string
  /** The request that brought the answer (the audit entry's requestId). */
  requestId?: string | null
}
export type SsoSignInListener = (e: SsoSignInEvent) => void | Promise<void>

const refused = (message: string) => new ApiError('invalid_credentials', message)
/** A callback that belongs to no sign-in under way in this browser: nothing was asked of the provider. */
const unknownFlow = (message: string) => new ApiError('bad_request', message)

export class OidcSignIn {
  private readonly repo: SsoRepository
  /** Discovered configurations per workspace, for the settings they were made from. */
  private readonly configs = new Map<string, { key: string; config: Promise<oidc.Configuration> }>()

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly random: RandomSource | undefined,
    private readonly outbound: Pick<OutboundGuard, 'check' | 'dispatcher'>,
    private readonly sso: SsoService,
    private readonly users: Pick<UserService, 'vouched' | 'byEmail'>,
    private readonly signIns: Pick<SignInService, 'signInVouched'>,
    private readonly workspaces: Pick<WorkspaceService, 'require'>,
    private readonly told: (e: SsoSignInEvent) => Promise<void>,
  ) {
    this.repo = new SsoRepository(db.kysely)
  }

  /** Every request to a provider, through the outbound address checks. */
  private readonly guardedFetch: oidc.CustomFetch = async (url, options) => {
    this.outbound.check(url)
    const res = await undiciFetch(url, { ...(options as RequestInit), dispatcher: this.outbound.dispatcher })
    return res as unknown as Response
  }

  /** The provider's configuration: its discovery document, read once per settings version. */
  private configuration(p: Provider): Promise<oidc.Configuration> {
    const key = `${p.updatedAt}|${p.issuer}|${p.clientId}`
    const hit = this.configs.get(p.workspaceId)
    if (hit && hit.key === key) return hit.config
    const config = oidc
      .discovery(new URL(p.issuer), p.clientId, { [oidc.clockTolerance]: 60 }, oidc.ClientSecretBasic(p.clientSecret ?? ''), {
        [oidc.customFetch]: this.guardedFetch,
        timeout: 10,
      })
      .then((c) => {
        c[oidc.customFetch] = this.guardedFetch
        return c
      })
    // A failed discovery is tried again on the next sign-in.
    config.catch(() => this.configs.get(p.workspaceId)?.config === config && this.configs.delete(p.workspaceId))
    this.configs.set(p.workspaceId, { key, config })
    return config
  }

  /** Reads the provider's discovery document and keys (the console's "test connection"). */
  async test(workspaceId: string): Promise<{ issuer: string; authorizationEndpoint: string; keys: number }> {
    const p = await this.sso.oidcProvider(workspaceId)
    if (!p) throw new ApiError('not_found', 'This workspace has no single sign-on set up.')
    this.configs.delete(workspaceId)
    let meta: oidc.ServerMetadata
    try {
      meta = (await this.configuration(p)).serverMetadata()
    } catch (e) {
      throw new ApiError('validation_error', `The provider's discovery document could not be read: ${(e as Error).message}`)
    }
    if (!meta.jwks_uri || !meta.authorization_endpoint)
      throw new ApiError('validation_error', 'The discovery document names no jwks_uri or authorization_endpoint.')
    let keys: number
    try {
      const res = await this.guardedFetch(meta.jwks_uri, { method: 'GET', headers: { accept: 'application/json' }, redirect: 'manual', body: undefined })
      if (!res.ok) throw new Error(`HTTP ${res.status}`)
      keys = ((await res.json()) as { keys?: unknown[] }).keys?.length ?? 0
    } catch (e) {
      throw new ApiError('validation_error', `The provider's keys (${meta.jwks_uri}) could not be read: ${(e as Error).message}`)
    }
    return { issuer: meta.issuer, authorizationEndpoint: meta.authorization_endpoint, keys }
  }

  /** The provider's authorization URL for `email`'s workspace, and the state for the browser's cookie; 404 for an unclaimed domain. */
  async start(email: string, origin: string): Promise<{ url: string; state: string }> {
    const ws = await this.sso.workspaceOfEmail(email)
    const p = ws === undefined ? undefined : await this.sso.oidcProvider(ws)
    if (!p) throw new ApiError('not_found', 'No workspace signs in this e-mail domain through single sign-on.')
    let config: oidc.Configuration
    try {
      config = await this.configuration(p)
    } catch (e) {
      throw new ApiError('provider_unreachable', `The identity provider cannot be reached: ${(e as Error).message}`)
    }
    const state = randomToken(43, this.random)
    const nonce = randomToken(43, this.random)
    const codeVerifier = randomToken(64, this.random)
    const redirectUri = this.sso.redirectUri(origin)
    const now = this.clock.now()
    await this.repo.insertFlow({
      state_hash: hashSecret(state),
      workspace_id: p.workspaceId,
      nonce,
      code_verifier: codeVerifier,
      redirect_uri: redirectUri,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + FLOW_TTL_MS).toISOString(),
      used_at: null,
    })
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      login_hint: email,
    })
    return { url: url.href, state }
  }

  /** The provider's answer (the callback's query) in the browser holding `stateCookie`: signs the user in. */
  async callback(query: Record<string, string>, stateCookie: string | undefined, ip: string): Promise<SignedIn> {
    let workspaceId: string | null = null
    let email: string | null = null
    try {
      const state = query.state ?? ''
      if (!state || !stateCookie || !sameText(state, stateCookie)) throw unknownFlow('This sign-in was not started in this browser: start it again.')
      const flow = await this.repo.takeFlow(hashSecret(state), this.clock.now().toISOString())
      if (!flow || flow.expires_at <= this.clock.now().toISOString()) throw unknownFlow('This sign-in is unknown, used or expired: start it again.')
      workspaceId = flow.workspace_id
      if (query.error)
        throw refused(`The identity provider refused the sign-in: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}.`)
      const p = await this.sso.oidcProvider(flow.workspace_id)
      if (!p) throw refused('This workspace no longer signs in through single sign-on.')
      const config = await this.configuration(p)
      const current = new URL(flow.redirect_uri)
      for (const [k, v] of Object.entries(query)) current.searchParams.set(k, v)
      let claims: oidc.IDToken | undefined
      try {
        const tokens = await oidc.authorizationCodeGrant(config, current, {
          pkceCodeVerifier: flow.code_verifier,
          expectedState: state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        })
        claims = tokens.claims()
      } catch (e) {
        // openid-client wraps what it found (e.g. `unexpected ID Token "nonce" claim value`) as the cause.
        const cause = (e as Error).cause
        throw refused(`The identity provider's answer was refused: ${cause instanceof Error ? cause.message : (e as Error).message}.`)
      }
      if (!claims) throw refused('The identity provider sent no ID token.')
      email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : null
      if (!email) throw refused('The ID token carries no `email` claim: add the `email` scope or claim at the provider.')
      if (claims.email_verified === false) throw refused('The identity provider says this e-mail address is not verified.')
      if ((await this.sso.workspaceOfEmail(email)) !== flow.workspace_id) throw refused(`${email} is not of an e-mail domain this workspace claims.`)
      if (await this.sso.deactivatedEmail(flow.workspace_id, email, this.users))
        throw refused(`${email} was deactivated by the identity provider's provisioning.`)
      const role = mappedRole(p, p.roleClaim ? claims[p.roleClaim] : undefined)
      const name = typeof claims.name === 'string' ? claims.name : null
      const user = await this.users.vouched(flow.workspace_id, { email, name, role })
      const ws = await this.workspaces.require(flow.workspace_id)
      const out = await this.signIns.signInVouched(user, { id: ws.id, name: ws.name })
      await this.told({ workspaceId, protocol: 'oidc', outcome: 'success', userId: user.id, email, reason: null, ip })
      return out
    } catch (e) {
      await this.told({ workspaceId, protocol: 'oidc', outcome: 'failure', userId: null, email, reason: (e as Error).message, ip })
      throw e
    }
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
