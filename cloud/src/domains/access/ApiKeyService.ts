// API keys: bearer credentials `ak_<region>_live_<32>`. The secret is shown once (create,
// rotate) and stored only as a hash; `preview` finds the candidates and the hash is then
// compared in constant time. A key never receives a permission its creator lacks, and
// rotating or revoking a key needs every permission it holds (and reach of its pin).
// A key created by another key lives no longer than its parent: its expiry is capped at
// the parent's, revoking the parent revokes it, and authentication also refuses a key
// whose creator chain holds a revoked or expired key (rows written before that rule).
//
// Authentication is on every request, so its result is kept in the PrincipalCache: a
// presented key's principal (and an OAuth token's, which acts as its key) is cached for
// PRINCIPAL_TTL_MS with the earliest expiry along its creator chain, and dropped at once
// when a CredentialChange names the key or any key above it (revoke, rotate, delete, a
// permission change), so a revoked key is refused on the very next request. `last_used_at` is collected in memory and written in one batch every
// LAST_USED_FLUSH_MS and on close; views of a key merge the value not yet written.
import { timingSafeEqual } from 'node:crypto'
import { isPermission, missingFrom, PERMISSIONS, type Permission, type PermissionGrant } from '@svc/shared'
import { Type, type Static } from '@sinclair/typebox'
import type { Clock, IdGenerator, RandomSource } from '../../platform/clock.js'
import type { Database, Queryable } from '../../platform/db/Database.js'
import { ApiError, validation } from '../../platform/errors.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import { actorRef, type Principal } from '../../platform/http/Principal.js'
import { freezePrincipal, keyTag, PrincipalCache, userTag } from './PrincipalCache.js'
import { Listeners } from '../../platform/hooks.js'
import type { Deactivation } from './SignInService.js'
import { apiKeyPreview, hashSecret, newApiKeySecret, API_KEY_PATTERN, type Region } from '../../platform/secrets.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import { ApiKeyRepository, type ApiKeyAncestor, type ApiKeyAuthRecord, type ApiKeyRecord } from './ApiKeyRepository.js'
import type { NodeService } from '../nodes/index.js'
import { LocalCredentialChanges, type CredentialChanges } from './CredentialChanges.js'

/** An API key as the API answers it: the routes' response schema, and ApiKeyView is derived from it. */
export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  preview: Type.String({ description: 'First characters of the key, for recognition only.' }),
  permissions: Type.Union([Type.Literal('all'), Type.Array(StringEnum(PERMISSIONS))]),
  nodeId: Nullable(Type.String()),
  lastUsedAt: Nullable(Timestamp),
  expiresAt: Nullable(Timestamp),
  expired: Type.Boolean(),
  revokedAt: Nullable(Timestamp),
  createdAt: Timestamp,
})
export type ApiKeyView = Static<typeof ApiKey>

export { PRINCIPAL_TTL_MS } from './PrincipalCache.js'
/** Pending `last_used_at` values are written at most this long after the use (and on close). */
export const LAST_USED_FLUSH_MS = 5_000

export class ApiKeyService {
  /** Principals of presented credentials (keys here; session and OAuth tokens share it). */
  readonly principals: PrincipalCache
  /** Key id -> last use not yet written (ms). */
  private readonly pendingLastUsed = new Map<string, number>()
  /**
   * Key id -> a use taken by a flush, kept until the flush after the one that wrote it: a
   * read on another connection (PostgreSQL) may run while the write is uncommitted, and
   * must still see the use.
   */
  private readonly flushedLastUsed = new Map<string, number>()
  /** The batch the last successful flush wrote (dropped from flushedLastUsed at the next flush). */
  private confirmedLastUsed: [string, number][] = []
  private lastFlushAt: number
  private flushTimer: NodeJS.Timeout | null = null
  private flushing: Promise<void> | null = null
  private readonly repo: ApiKeyRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly random?: RandomSource,
    private readonly changes: CredentialChanges = new LocalCredentialChanges(),
    /** Whether a user was deactivated (SCIM): the keys they made, and the keys made under those, stop. */
    private readonly deactivations: Listeners<Deactivation> = new Listeners(),
  ) {
    this.repo = new ApiKeyRepository(db.kysely)
    this.lastFlushAt = clock.now().getTime()
    this.principals = new PrincipalCache(clock, changes)
  }

  private view(r: ApiKeyRecord): ApiKeyView {
    const grant = JSON.parse(r.permissions) as Permission[] | 'all'
    const pendingMs = Math.max(this.pendingLastUsed.get(r.id) ?? -1, this.flushedLastUsed.get(r.id) ?? -1)
    const pending = pendingMs < 0 ? undefined : new Date(pendingMs).toISOString()
    return {
      id: r.id,
      name: r.name,
      preview: r.preview,
      permissions: grant,
      nodeId: r.node_id,
      lastUsedAt: pending !== undefined && (r.last_used_at === null || pending > r.last_used_at) ? pending : r.last_used_at,
      expiresAt: r.expires_at,
      expired: r.expires_at !== null && r.expires_at <= this.clock.now().toISOString(),
      revokedAt: r.revoked_at,
      createdAt: r.created_at,
    }
  }

  private async row(p: Principal, id: string): Promise<ApiKeyRecord> {
    return this.nodes.findReachable<ApiKeyRecord>(p, 'api_keys', id, 'API key')
  }

  /** Creates a key directly (bootstrap): no creator to check against. */
  async createRoot(
    workspaceId: string,
    region: Region,
    name: string,
    grant: PermissionGrant,
    nodeId: string | null = null,
  ): Promise<{ key: ApiKeyView; secret: string }> {
    return this.insert(workspaceId, region, name, grant, nodeId, null, 'bootstrap')
  }

  private async insert(
    workspaceId: string,
    region: Region,
    name: string,
    grant: PermissionGrant,
    nodeId: string | null,
    expiresAt: string | null,
    createdBy: string,
  ): Promise<{ key: ApiKeyView; secret: string }> {
    const secret = newApiKeySecret(region, this.random)
    const id = this.ids.next('apiKey')
    const row: ApiKeyRecord = {
      id,
      workspace_id: workspaceId,
      name,
      preview: apiKeyPreview(secret),
      secret_hash: hashSecret(secret),
      permissions: JSON.stringify(grant),
      node_id: nodeId,
      created_by: createdBy,
      expires_at: expiresAt,
      revoked_at: null,
      last_used_at: null,
      created_at: this.clock.now().toISOString(),
    }
    await this.repo.insert(row)
    return { key: this.view(row), secret }
  }

  async create(
    p: Principal,
    region: Region,
    input: { name: string; permissions: string[] | 'all'; nodeId?: string | null; expiresAt?: string | null },
  ): Promise<{ key: ApiKeyView; secret: string }> {
    const name = input.name.trim()
    if (!name) throw validation('name must not be empty.')
    let grant: PermissionGrant
    if (input.permissions === 'all') grant = 'all'
    else {
      const unknown = input.permissions.filter((x) => !isPermission(x))
      if (unknown.length) throw validation(`permissions holds unknown permission(s): ${unknown.join(', ')}.`)
      if (input.permissions.length === 0) throw validation('permissions must name at least one permission, or be "all".')
      grant = [...new Set(input.permissions as Permission[])].sort()
    }
    this.requireCovers(p, grant)
    const nodeId = await this.nodes.resolveHome(p, input.nodeId)
    let expiresAt: string | null = null
    if (input.expiresAt !== undefined && input.expiresAt !== null) {
      const t = new Date(input.expiresAt)
      if (Number.isNaN(t.getTime())) throw validation('expiresAt must be an ISO 8601 date-time.')
      if (t.getTime() <= this.clock.now().getTime()) throw validation('expiresAt must be in the future.')
      expiresAt = t.toISOString()
    }
    // A child never outlives its parent key: no expiry, or a later one, becomes the parent's.
    if (p.actor.kind === 'key' && p.actor.id) {
      const parent = await this.repo.byId(p.actor.id)
      if (parent?.expires_at && (expiresAt === null || expiresAt > parent.expires_at)) expiresAt = parent.expires_at
    }
    return this.insert(p.workspaceId, region, name.slice(0, 120), grant, nodeId, expiresAt, actorRef(p))
  }

  async list(p: Principal, page: PageRequest): Promise<Page<ApiKeyView>> {
    const scopeIds = await this.nodes.scopeIds(p)
    const total = page.count ? await this.repo.count(p.workspaceId, scopeIds) : undefined
    const rows = await this.repo.list(p.workspaceId, scopeIds, page)
    return pageOf(rows, page, (r) => this.view(r), total)
  }

  async get(p: Principal, id: string): Promise<ApiKeyView> {
    return this.view(await this.row(p, id))
  }

  async rotate(p: Principal, id: string, region: Region): Promise<{ key: ApiKeyView; secret: string }> {
    const r = await this.row(p, id)
    if (r.revoked_at) throw new ApiError('revoked', 'This API key is revoked; create a new one.')
    this.requireCovers(p, JSON.parse(r.permissions) as PermissionGrant)
    const secret = newApiKeySecret(region, this.random)
    await this.repo.setSecret(id, apiKeyPreview(secret), hashSecret(secret))
    this.changes.publish({ kind: 'apiKey', ids: [id] })
    return { key: await this.get(p, id), secret }
  }

  async revoke(p: Principal, id: string): Promise<ApiKeyView> {
    const r = await this.row(p, id)
    if (r.revoked_at) throw new ApiError('revoked', 'This API key is already revoked.')
    this.requireCovers(p, JSON.parse(r.permissions) as PermissionGrant)
    // The key and every key created under it (children, grandchildren…) stop together.
    await this.repo.revokeTree(id, this.clock.now().toISOString())
    // Cached principals of the key and of its subtree (their chains hold it) go now.
    this.changes.publish({ kind: 'apiKey', ids: [id] })
    return this.get(p, id)
  }

  /** Acting on (creating, rotating, revoking) a key needs every permission the key holds. */
  private requireCovers(p: Principal, grant: PermissionGrant): void {
    const lacking = missingFrom(p.grant, grant)
    if (lacking.length) throw new ApiError('forbidden', `Missing permission: ${lacking[0]}`)
  }

  /** The keys above one created by `createdBy` (nearest first), with what decides their validity. */
  private async ancestors(createdBy: string): Promise<ApiKeyAncestor[]> {
    if (!createdBy.startsWith('apikey:')) return []
    return this.repo.ancestors(createdBy.slice('apikey:'.length))
  }

  /** The principal behind a presented key, or null when unknown, revoked or expired (itself or up its creator chain). */
  async authenticate(secret: string): Promise<Principal | null> {
    if (!API_KEY_PATTERN.test(secret)) return null
    const cached = this.cachedPrincipal(secret)
    if (cached) return cached
    const hash = hashSecret(secret)
    const cacheKey = `ak:${hash}`
    return this.principals.shared(cacheKey, (gen) => this.lookUp(secret, hash, cacheKey, gen))
  }

  /** The database lookup behind `authenticate`: the principal of a presented key, cached unless a change came meanwhile. */
  private async lookUp(secret: string, hash: string, cacheKey: string, gen: number): Promise<Principal | null> {
    const now = this.clock.now()
    const rows = await this.repo.byPreview(apiKeyPreview(secret))
    const presented = Buffer.from(hash, 'hex')
    let hit: ApiKeyAuthRecord | undefined
    for (const r of rows) {
      const stored = Buffer.from(r.secret_hash, 'hex')
      if (stored.length === presented.length && timingSafeEqual(stored, presented)) hit = r
    }
    if (!hit) return null
    const found = await this.validPrincipal(hit, now)
    if (!found) return null
    const { principal, tags, expiresAt } = found
    this.touch(hit.id, now)
    this.principals.set(gen, cacheKey, principal, tags, expiresAt)
    return principal
  }

  /**
   * The cached principal of a presented key (its use recorded), without waiting: undefined
   * when not cached (then `authenticate` looks it up). Authentication's per-request path.
   */
  cachedPrincipal(secret: string): Principal | undefined {
    const cached = this.principals.get(`ak:${hashSecret(secret)}`)
    if (!cached) return undefined
    this.touch(cached.principal.actor.id!, this.clock.now())
    return cached.principal
  }

  /**
   * The principal of key `id` when it is valid now and its secret hash is still
   * `secretHash` (an OAuth access token acts as its key until the key is revoked, rotated
   * or expires). Null otherwise.
   */
  async principalOfKey(id: string, secretHash: string): Promise<{ principal: Principal; tags: string[]; expiresAt: number } | null> {
    const row = await this.repo.authById(id)
    if (!row) return null
    const a = Buffer.from(row.secret_hash, 'hex')
    const b = Buffer.from(secretHash, 'hex')
    if (a.length !== b.length || !timingSafeEqual(a, b)) return null
    const now = this.clock.now()
    const found = await this.validPrincipal(row, now)
    if (!found) return null
    this.touch(row.id, now)
    return found
  }

  /**
   * The key's principal, the cache tags that drop it (its creator chain's keys and the user who
   * made the chain's first key) and its earliest expiry; null when it or a key above it is revoked
   * or expired, or the user who made the chain's first key is deactivated.
   */
  private async validPrincipal(hit: ApiKeyAuthRecord, now: Date): Promise<{ principal: Principal; tags: string[]; expiresAt: number } | null> {
    const iso = now.toISOString()
    if (hit.revoked_at || (hit.expires_at && hit.expires_at <= iso)) return null
    let expiresAt = hit.expires_at ? Date.parse(hit.expires_at) : Infinity
    const chain = [hit.id]
    let maker = hit.created_by
    for (const a of await this.ancestors(hit.created_by)) {
      if (a.revoked_at || (a.expires_at && a.expires_at <= iso)) return null
      if (a.expires_at) expiresAt = Math.min(expiresAt, Date.parse(a.expires_at))
      chain.push(a.id)
      maker = a.created_by
    }
    const tags = chain.map(keyTag)
    // A key made by a user (not at bootstrap, nor by a key whose chain is cut at 64): the user's
    // deactivation stops it, and the credential change it publishes drops the cached principal.
    if (!maker.startsWith('apikey:') && maker !== 'bootstrap') {
      for (const deactivated of this.deactivations.all()) if (await deactivated(maker)) return null
      tags.push(userTag(maker))
    }
    const principal = freezePrincipal({
      actor: { kind: 'key', id: hit.id, name: hit.name, nodeId: hit.node_id },
      workspaceId: hit.workspace_id,
      grant: JSON.parse(hit.permissions) as PermissionGrant,
      nodeId: hit.node_id,
    })
    return { principal, tags, expiresAt }
  }

  /** Records a use; written with the next batch. */
  touch(id: string, now: Date): void {
    const t = now.getTime()
    this.pendingLastUsed.set(id, t)
    if (t - this.lastFlushAt >= LAST_USED_FLUSH_MS) {
      void this.flushLastUsed().catch(() => undefined)
    } else if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = null
        void this.flushLastUsed().catch(() => undefined)
      }, LAST_USED_FLUSH_MS)
      this.flushTimer.unref()
    }
  }

  /** Writes every pending `last_used_at` in one transaction (never moving one backwards). */
  async flushLastUsed(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer)
      this.flushTimer = null
    }
    this.lastFlushAt = this.clock.now().getTime()
    if (this.pendingLastUsed.size === 0) return this.idle()
    const batch = [...this.pendingLastUsed]
    this.pendingLastUsed.clear()
    for (const [id, ms] of this.confirmedLastUsed) if (this.flushedLastUsed.get(id) === ms) this.flushedLastUsed.delete(id)
    this.confirmedLastUsed = []
    for (const [id, ms] of batch) if ((this.flushedLastUsed.get(id) ?? -1) < ms) this.flushedLastUsed.set(id, ms)
    const previous = this.flushing
    const run = (async () => {
      await previous?.catch(() => undefined)
      const writes = batch.map(([id, ms]): [string, string] => [id, new Date(ms).toISOString()])
      await this.db.kysely.transaction().execute((trx) => this.repo.touchLastUsed(writes, trx))
    })()
    this.flushing = run
    try {
      await run
      this.confirmedLastUsed.push(...batch)
    } catch (e) {
      // Kept for the next flush unless a newer use replaced it meanwhile.
      for (const [id, at] of batch) {
        if (!this.pendingLastUsed.has(id)) this.pendingLastUsed.set(id, at)
        if (this.flushedLastUsed.get(id) === at) this.flushedLastUsed.delete(id)
      }
      throw e
    } finally {
      if (this.flushing === run) this.flushing = null
    }
  }

  /** Resolves once the batch being written (if any) is written. */
  async idle(): Promise<void> {
    await this.flushing?.catch(() => undefined)
  }

  /** Writes what is pending and stops the flush timer (the app calls it on close). */
  /** A location is deleted: revoked keys pinned to it keep no reference to it (inside the delete's transaction). */
  async locationRemoved(tx: Queryable, workspaceId: string, nodeId: string): Promise<void> {
    await this.repo.unpinRevoked(workspaceId, nodeId, tx.kysely)
  }

  async close(): Promise<void> {
    await this.flushLastUsed()
  }

  /** Keys pinned at a node block deleting it. */
  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    return this.repo.countAtNode(workspaceId, nodeId)
  }
}
