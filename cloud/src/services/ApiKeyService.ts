// API keys: bearer credentials `ak_<region>_live_<32>`. The secret is shown once (create,
// rotate) and stored only as a hash; `preview` finds the candidates and the hash is then
// compared in constant time. A key never receives a permission its creator lacks.
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
    const lacking = missingFrom(p.grant, grant)
    if (lacking.length) throw new ApiError('forbidden', `Missing permission: ${lacking[0]}`)
    const nodeId = await this.nodes.resolveHome(p, input.nodeId)
    let expiresAt: string | null = null
    if (input.expiresAt !== undefined && input.expiresAt !== null) {
      const t = new Date(input.expiresAt)
      if (Number.isNaN(t.getTime())) throw validation('expiresAt must be an ISO 8601 date-time.')
      if (t.getTime() <= this.clock.now().getTime()) throw validation('expiresAt must be in the future.')
      expiresAt = t.toISOString()
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
    const lacking = missingFrom(p.grant, JSON.parse(r.permissions) as PermissionGrant)
    if (lacking.length) throw new ApiError('forbidden', `Missing permission: ${lacking[0]}`)
    const secret = newApiKeySecret(region, this.random)
    await this.db.run('UPDATE api_keys SET preview = ?, secret_hash = ? WHERE id = ?', [apiKeyPreview(secret), hashSecret(secret), id])
    return { key: await this.get(p, id), secret }
  }

  async revoke(p: Principal, id: string): Promise<ApiKeyView> {
    const r = await this.row(p, id)
    if (r.revoked_at) throw new ApiError('revoked', 'This API key is already revoked.')
    await this.db.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [this.clock.now().toISOString(), id])
    return this.get(p, id)
  }

  /** The principal behind a presented key, or null when unknown, revoked or expired. */
  async authenticate(secret: string): Promise<Principal | null> {
    if (!API_KEY_PATTERN.test(secret)) return null
    const rows = await this.db.all<KeyRow>('SELECT * FROM api_keys WHERE preview = ?', [apiKeyPreview(secret)])
    let hit: KeyRow | undefined
    for (const r of rows) if (secretMatches(secret, r.secret_hash)) hit = r
    const now = this.clock.now()
    if (!hit || hit.revoked_at || (hit.expires_at && hit.expires_at <= now.toISOString())) return null
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
