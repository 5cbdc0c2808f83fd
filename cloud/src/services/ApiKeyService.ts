// API keys: bearer credentials `ak_<region>_live_<32>`. The secret is shown once (create,
// rotate) and stored only as a hash; `preview` finds the candidates and the hash is then
// compared in constant time. A key never receives a permission its creator lacks, and
// rotating or revoking a key needs every permission it holds (and reach of its pin).
// A key created by another key lives no longer than its parent: its expiry is capped at
// the parent's, revoking the parent revokes it, and authentication also refuses a key
// whose creator chain holds a revoked or expired key (rows written before that rule).
//
// Authentication is on every request, so its result is kept: a presented key's principal
// is cached for PRINCIPAL_TTL_MS (with the earliest expiry along its creator chain, checked
// on every hit), and dropped at once when a CredentialChange names the key or any key above
// it (revoke, rotate, delete, a permission change), so a revoked key is refused on the very
// next request. `last_used_at` is collected in memory and written in one batch every
// LAST_USED_FLUSH_MS and on close; views of a key merge the value not yet written.
import { timingSafeEqual } from 'node:crypto'
import { isPermission, missingFrom, type Permission, type PermissionGrant } from '@svc/shared'
import type { Clock, IdGenerator, RandomSource } from '../clock.js'
import type { Database } from '../db/Database.js'
import { ApiError, validation } from '../errors.js'
import { actorRef, type Principal } from '../auth/Principal.js'
import { apiKeyPreview, hashSecret, newApiKeySecret, API_KEY_PATTERN, type Region } from '../auth/secrets.js'
import { descPageSql, pageOf, type Page, type PageRequest } from '../http/pagination.js'
import type { NodeService } from './NodeService.js'
import { LocalCredentialChanges, type CredentialChanges } from './CredentialChanges.js'

interface KeyRow {
  id: string
  workspace_id: string
  name: string
  preview: string
  secret_hash: string
  permissions: string
  node_id: string | null
  created_by: string
  expires_at: string | null
  revoked_at: string | null
  last_used_at: string | null
  created_at: string
}

export interface ApiKeyView {
  id: string
  name: string
  preview: string
  permissions: Permission[] | 'all'
  nodeId: string | null
  lastUsedAt: string | null
  expiresAt: string | null
  expired: boolean
  revokedAt: string | null
  createdAt: string
}

/** How long a presented key's principal is kept without asking the database again. */
export const PRINCIPAL_TTL_MS = 5_000
/** Pending `last_used_at` values are written at most this long after the use (and on close). */
export const LAST_USED_FLUSH_MS = 5_000
/** Bound on cached principals; the oldest entry goes first. */
const PRINCIPAL_CACHE_MAX = 10_000

type AuthRow = Pick<KeyRow, 'id' | 'workspace_id' | 'name' | 'secret_hash' | 'permissions' | 'node_id' | 'created_by' | 'expires_at' | 'revoked_at'>

interface CachedPrincipal {
  principal: Principal
  keyId: string
  /** The key and every key above it on its creator chain. */
  chain: string[]
  /** Earliest expiry along the chain (ms; Infinity when none). */
  expiresAt: number
  /** Kept until then (ms, clock time). */
  until: number
}

function freezePrincipal(p: Principal): Principal {
  Object.freeze(p.actor)
  if (Array.isArray(p.grant)) Object.freeze(p.grant)
  return Object.freeze(p)
}

export class ApiKeyService {
  /** Principals by the SHA-256 of the presented secret. */
  private readonly principals = new Map<string, CachedPrincipal>()
  /** Bumped by every change: a lookup that began before one does not fill the cache. */
  private generation = 0
  /** Key id -> last use not yet written (ms). */
  private readonly pendingLastUsed = new Map<string, number>()
  private lastFlushAt: number
  private flushTimer: NodeJS.Timeout | null = null
  private flushing: Promise<void> | null = null

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly random?: RandomSource,
    private readonly changes: CredentialChanges = new LocalCredentialChanges(),
  ) {
    this.lastFlushAt = clock.now().getTime()
    changes.subscribe((c) => {
      if (c.kind === 'apiKey') this.forget(c.ids)
    })
  }

  /** Drops cached principals of these keys and of every key created under them. */
  private forget(ids: string[]): void {
    this.generation++
    const gone = new Set(ids)
    for (const [h, e] of this.principals) if (e.chain.some((id) => gone.has(id))) this.principals.delete(h)
  }

  private view(r: KeyRow): ApiKeyView {
    const grant = JSON.parse(r.permissions) as Permission[] | 'all'
    const pendingMs = this.pendingLastUsed.get(r.id)
    const pending = pendingMs === undefined ? undefined : new Date(pendingMs).toISOString()
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

  private async row(p: Principal, id: string): Promise<KeyRow> {
    return this.nodes.findReachable<KeyRow>(p, 'api_keys', id, 'API key')
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
    await this.db.run(
      'INSERT INTO api_keys (id, workspace_id, name, preview, secret_hash, permissions, node_id, created_by, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [id, workspaceId, name, apiKeyPreview(secret), hashSecret(secret), JSON.stringify(grant), nodeId, createdBy, expiresAt, this.clock.now().toISOString()],
    )
    const r = (await this.db.get<KeyRow>('SELECT * FROM api_keys WHERE id = ?', [id]))!
    return { key: this.view(r), secret }
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
      const parent = await this.db.get<{ expires_at: string | null }>('SELECT expires_at FROM api_keys WHERE id = ?', [p.actor.id])
      if (parent?.expires_at && (expiresAt === null || expiresAt > parent.expires_at)) expiresAt = parent.expires_at
    }
    return this.insert(p.workspaceId, region, name.slice(0, 120), grant, nodeId, expiresAt, actorRef(p))
  }

  async list(p: Principal, page: PageRequest): Promise<Page<ApiKeyView>> {
    const scope = await this.nodes.scopeClause(p, 'node_id')
    const where = `workspace_id = ?${scope.sql}`
    const params = [p.workspaceId, ...scope.params]
    const total = page.count ? (await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM api_keys WHERE ${where}`, params))!.n : undefined
    const sql = descPageSql(page)
    const rows = await this.db.all<KeyRow>(`SELECT * FROM api_keys WHERE ${where}${sql.where}${sql.tail}`, [...params, ...sql.params, ...sql.limitParams])
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
    await this.db.run('UPDATE api_keys SET preview = ?, secret_hash = ? WHERE id = ?', [apiKeyPreview(secret), hashSecret(secret), id])
    this.changes.publish({ kind: 'apiKey', ids: [id] })
    return { key: await this.get(p, id), secret }
  }

  async revoke(p: Principal, id: string): Promise<ApiKeyView> {
    const r = await this.row(p, id)
    if (r.revoked_at) throw new ApiError('revoked', 'This API key is already revoked.')
    this.requireCovers(p, JSON.parse(r.permissions) as PermissionGrant)
    // The key and every key created under it (children, grandchildren…) stop together.
    await this.db.run(
      `WITH RECURSIVE tree(id) AS (SELECT ? UNION SELECT k.id FROM api_keys k JOIN tree ON k.created_by = 'apikey:' || tree.id)
       UPDATE api_keys SET revoked_at = ? WHERE id IN (SELECT id FROM tree) AND revoked_at IS NULL`,
      [id, this.clock.now().toISOString()],
    )
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
  private async ancestors(createdBy: string): Promise<{ id: string; revoked_at: string | null; expires_at: string | null }[]> {
    if (!createdBy.startsWith('apikey:')) return []
    return this.db.all(
      `WITH RECURSIVE up(id, depth) AS (SELECT ?, 0 UNION ALL SELECT substr(k.created_by, 8), up.depth + 1 FROM api_keys k JOIN up ON k.id = up.id WHERE k.created_by LIKE 'apikey:%' AND up.depth < 64)
       SELECT k.id, k.revoked_at, k.expires_at FROM api_keys k JOIN up ON k.id = up.id ORDER BY up.depth`,
      [createdBy.slice('apikey:'.length)],
    )
  }

  /** The principal behind a presented key, or null when unknown, revoked or expired (itself or up its creator chain). */
  async authenticate(secret: string): Promise<Principal | null> {
    if (!API_KEY_PATTERN.test(secret)) return null
    const hash = hashSecret(secret)
    const now = this.clock.now()
    const t = now.getTime()
    const cached = this.principals.get(hash)
    if (cached) {
      if (t < cached.until && t < cached.expiresAt) {
        this.touch(cached.keyId, now)
        return cached.principal
      }
      this.principals.delete(hash)
    }
    const gen = this.generation
    const rows = await this.db.all<AuthRow>(
      'SELECT id, workspace_id, name, secret_hash, permissions, node_id, created_by, expires_at, revoked_at FROM api_keys WHERE preview = ?',
      [apiKeyPreview(secret)],
    )
    const presented = Buffer.from(hash, 'hex')
    let hit: AuthRow | undefined
    for (const r of rows) {
      const stored = Buffer.from(r.secret_hash, 'hex')
      if (stored.length === presented.length && timingSafeEqual(stored, presented)) hit = r
    }
    if (!hit) return null
    const found = await this.validPrincipal(hit, now)
    if (!found) return null
    const { principal, chain, expiresAt } = found
    this.touch(hit.id, now)
    if (gen === this.generation) {
      if (this.principals.size >= PRINCIPAL_CACHE_MAX) this.principals.delete(this.principals.keys().next().value!)
      this.principals.set(hash, { principal, keyId: hit.id, chain, expiresAt, until: t + PRINCIPAL_TTL_MS })
    }
    return principal
  }

  /**
   * The principal of key `id` when it is valid now and its secret hash is still
   * `secretHash` (an OAuth access token acts as its key until the key is revoked, rotated
   * or expires). Null otherwise.
   */
  async principalOfKey(id: string, secretHash: string): Promise<{ principal: Principal; expiresAt: number } | null> {
    const row = await this.db.get<AuthRow>(
      'SELECT id, workspace_id, name, secret_hash, permissions, node_id, created_by, expires_at, revoked_at FROM api_keys WHERE id = ?',
      [id],
    )
    if (!row) return null
    const a = Buffer.from(row.secret_hash, 'hex')
    const b = Buffer.from(secretHash, 'hex')
    if (a.length !== b.length || !timingSafeEqual(a, b)) return null
    const now = this.clock.now()
    const found = await this.validPrincipal(row, now)
    if (!found) return null
    this.touch(row.id, now)
    return { principal: found.principal, expiresAt: found.expiresAt }
  }

  /** The key's principal, its creator chain and earliest expiry; null when it or a key above it is revoked or expired. */
  private async validPrincipal(hit: AuthRow, now: Date): Promise<{ principal: Principal; chain: string[]; expiresAt: number } | null> {
    const iso = now.toISOString()
    if (hit.revoked_at || (hit.expires_at && hit.expires_at <= iso)) return null
    let expiresAt = hit.expires_at ? Date.parse(hit.expires_at) : Infinity
    const chain = [hit.id]
    for (const a of await this.ancestors(hit.created_by)) {
      if (a.revoked_at || (a.expires_at && a.expires_at <= iso)) return null
      if (a.expires_at) expiresAt = Math.min(expiresAt, Date.parse(a.expires_at))
      chain.push(a.id)
    }
    const principal = freezePrincipal({
      actor: { kind: 'key', id: hit.id, name: hit.name, nodeId: hit.node_id },
      workspaceId: hit.workspace_id,
      grant: JSON.parse(hit.permissions) as PermissionGrant,
      nodeId: hit.node_id,
    })
    return { principal, chain, expiresAt }
  }

  /** Records a use; written with the next batch. */
  private touch(id: string, now: Date): void {
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
    const previous = this.flushing
    const run = (async () => {
      await previous?.catch(() => undefined)
      await this.db.transaction(async (tx) => {
        for (const [id, ms] of batch) {
          const at = new Date(ms).toISOString()
          await tx.run('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)', [at, id, at])
        }
      })
    })()
    this.flushing = run
    try {
      await run
    } catch (e) {
      // Kept for the next flush unless a newer use replaced it meanwhile.
      for (const [id, at] of batch) if (!this.pendingLastUsed.has(id)) this.pendingLastUsed.set(id, at)
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
  async close(): Promise<void> {
    await this.flushLastUsed()
  }

  /** Keys pinned at a node block deleting it. */
  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    const r = await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE workspace_id = ? AND node_id = ? AND revoked_at IS NULL', [
      workspaceId,
      nodeId,
    ])
    return r?.n ?? 0
  }
}
