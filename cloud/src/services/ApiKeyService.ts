// API keys: bearer credentials `ak_<region>_live_<32>`. The secret is shown once (create,
// rotate) and stored only as a hash; `preview` finds the candidates and the hash is then
// compared in constant time. A key never receives a permission its creator lacks, and
// rotating or revoking a key needs every permission it holds (and reach of its pin).
// A key created by another key lives no longer than its parent: its expiry is capped at
// the parent's, revoking the parent revokes it, and authentication also refuses a key
// whose creator chain holds a revoked or expired key (rows written before that rule).
import { isPermission, missingFrom, type Permission, type PermissionGrant } from '@svc/shared'
import type { Clock, IdGenerator, RandomSource } from '../clock.js'
import type { Database } from '../db/Database.js'
import { ApiError, validation } from '../errors.js'
import { actorRef, type Principal } from '../auth/Principal.js'
import { apiKeyPreview, hashSecret, newApiKeySecret, secretMatches, API_KEY_PATTERN, type Region } from '../auth/secrets.js'
import { descPageSql, pageOf, type Page, type PageRequest } from '../http/pagination.js'
import type { NodeService } from './NodeService.js'

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

/** lastUsedAt is written at most this often per key, so authentication stays cheap. */
const LAST_USED_RESOLUTION_MS = 60_000

export class ApiKeyService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly random?: RandomSource,
  ) {}

  private view(r: KeyRow): ApiKeyView {
    const grant = JSON.parse(r.permissions) as Permission[] | 'all'
    return {
      id: r.id,
      name: r.name,
      preview: r.preview,
      permissions: grant,
      nodeId: r.node_id,
      lastUsedAt: r.last_used_at,
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
  async createRoot(workspaceId: string, region: Region, name: string, grant: PermissionGrant, nodeId: string | null = null): Promise<{ key: ApiKeyView; secret: string }> {
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
    return this.get(p, id)
  }

  /** Acting on (creating, rotating, revoking) a key needs every permission the key holds. */
  private requireCovers(p: Principal, grant: PermissionGrant): void {
    const lacking = missingFrom(p.grant, grant)
    if (lacking.length) throw new ApiError('forbidden', `Missing permission: ${lacking[0]}`)
  }

  /** True when some key up `createdBy`'s creator chain is revoked or expired. */
  private async ancestryDead(createdBy: string, now: string): Promise<boolean> {
    if (!createdBy.startsWith('apikey:')) return false
    const r = await this.db.get<{ n: number }>(
      `WITH RECURSIVE up(id, depth) AS (SELECT ?, 0 UNION ALL SELECT substr(k.created_by, 8), up.depth + 1 FROM api_keys k JOIN up ON k.id = up.id WHERE k.created_by LIKE 'apikey:%' AND up.depth < 64)
       SELECT COUNT(*) AS n FROM api_keys k JOIN up ON k.id = up.id WHERE k.revoked_at IS NOT NULL OR (k.expires_at IS NOT NULL AND k.expires_at <= ?)`,
      [createdBy.slice('apikey:'.length), now],
    )
    return (r?.n ?? 0) > 0
  }

  /** The principal behind a presented key, or null when unknown, revoked or expired. */
  async authenticate(secret: string): Promise<Principal | null> {
    if (!API_KEY_PATTERN.test(secret)) return null
    const rows = await this.db.all<KeyRow>('SELECT * FROM api_keys WHERE preview = ?', [apiKeyPreview(secret)])
    let hit: KeyRow | undefined
    for (const r of rows) if (secretMatches(secret, r.secret_hash)) hit = r
    const now = this.clock.now()
    if (!hit || hit.revoked_at || (hit.expires_at && hit.expires_at <= now.toISOString())) return null
    if (await this.ancestryDead(hit.created_by, now.toISOString())) return null
    if (!hit.last_used_at || now.getTime() - Date.parse(hit.last_used_at) >= LAST_USED_RESOLUTION_MS) {
      await this.db.run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', [now.toISOString(), hit.id])
    }
    return {
      actor: { kind: 'key', id: hit.id, name: hit.name, nodeId: hit.node_id },
      workspaceId: hit.workspace_id,
      grant: JSON.parse(hit.permissions) as PermissionGrant,
      nodeId: hit.node_id,
    }
  }

  /** Keys pinned at a node block deleting it. */
  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    const r = await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys WHERE workspace_id = ? AND node_id = ? AND revoked_at IS NULL', [workspaceId, nodeId])
    return r?.n ?? 0
  }
}
