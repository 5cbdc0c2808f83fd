// OAuth 2.0 client credentials (RFC 6749 section 4.4): an API key (client_id = its id,
// client_secret = the key) is traded for an access token `oat_<40>` that lives
// TOKEN_TTL_SECONDS. The token is kept only as a hash. It acts as its key: the same
// principal (permissions, pin, workspace rate limit), and it stops working when the key
// is revoked, rotated (the stored secret hash no longer matches) or expires. Its principal
// is kept in the key service's PrincipalCache, tagged with its key's creator chain, so a
// revoked or rotated key stops its tokens on the very next request.
import type { Clock, IdGenerator, RandomSource } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { hashSecret, randomToken } from '../../platform/secrets.js'
import type { Principal } from '../../platform/http/Principal.js'
import { OAuthTokenRepository } from './OAuthTokenRepository.js'
import type { ApiKeyService } from './ApiKeyService.js'

export const TOKEN_TTL_SECONDS = 3600
export const OAUTH_TOKEN_PATTERN = /^oat_[A-Za-z0-9]{40}$/

export class OAuthService {
  private readonly repo: OAuthTokenRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly apiKeys: ApiKeyService,
    private readonly random?: RandomSource,
  ) {
    this.repo = new OAuthTokenRepository(db.kysely)
  }

  /** Issues a token for the key `clientId` when `clientSecret` is that key and it is valid; null otherwise. */
  async issue(clientId: string, clientSecret: string): Promise<{ accessToken: string; expiresIn: number; principal: Principal } | null> {
    const principal = await this.apiKeys.authenticate(clientSecret)
    if (principal?.actor.kind !== 'key' || principal.actor.id !== clientId) return null
    const token = `oat_${randomToken(40, this.random)}`
    const now = this.clock.now()
    await this.repo.insert({
      id: this.ids.next('oauthToken'),
      workspace_id: principal.workspaceId,
      api_key_id: clientId,
      token_hash: hashSecret(token),
      key_secret_hash: hashSecret(clientSecret),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + TOKEN_TTL_SECONDS * 1000).toISOString(),
    })
    return { accessToken: token, expiresIn: TOKEN_TTL_SECONDS, principal }
  }

  /** The principal of the token's key, or null when the token is unknown or expired, or its key no longer valid. */
  async authenticate(token: string): Promise<Principal | null> {
    if (!OAUTH_TOKEN_PATTERN.test(token)) return null
    const cached = this.cachedPrincipal(token)
    if (cached) return cached
    const hash = hashSecret(token)
    const cacheKey = `oat:${hash}`
    const cache = this.apiKeys.principals
    // Concurrent requests of the token share one lookup (PrincipalCache.shared).
    return cache.shared(cacheKey, async (gen) => {
      const row = await this.repo.byHash(hash)
      if (!row || row.expires_at <= this.clock.now().toISOString()) return null
      const key = await this.apiKeys.principalOfKey(row.api_key_id, row.key_secret_hash)
      if (!key) return null
      cache.set(gen, cacheKey, key.principal, key.tags, Math.min(key.expiresAt, Date.parse(row.expires_at)))
      return key.principal
    })
  }

  /** The cached principal of a presented access token (its key's use recorded), or undefined without a lookup. */
  cachedPrincipal(token: string): Principal | undefined {
    const cached = this.apiKeys.principals.get(`oat:${hashSecret(token)}`)
    if (!cached) return undefined
    this.apiKeys.touch(cached.principal.actor.id!, this.clock.now())
    return cached.principal
  }

  purgeExpired(): Promise<number> {
    return this.repo.purgeExpired(this.clock.now().toISOString())
  }
}
