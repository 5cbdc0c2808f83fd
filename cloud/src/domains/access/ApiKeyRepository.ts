// The only code that reads or writes `api_keys` (the reachability check reads a key by id
// through NodeRepository.homedRow, like every homed table).
import { sql, type Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { ApiKeysTable } from './tables.js'
import type { PageRequest } from '../../platform/paging.js'
import { paged, withinNodes } from '../../platform/db/keyset.js'

export type ApiKeyRecord = Selectable<ApiKeysTable>
/** What authentication needs of a key. */
export type ApiKeyAuthRecord = Pick<
  ApiKeyRecord,
  'id' | 'workspace_id' | 'name' | 'secret_hash' | 'permissions' | 'node_id' | 'created_by' | 'expires_at' | 'revoked_at'
>
/** A key above another on its creator chain, with what decides its validity. */
export type ApiKeyAncestor = Pick<ApiKeyRecord, 'id' | 'revoked_at' | 'expires_at' | 'created_by'>

const AUTH_COLUMNS = ['id', 'workspace_id', 'name', 'secret_hash', 'permissions', 'node_id', 'created_by', 'expires_at', 'revoked_at'] as const

export class ApiKeyRepository {
  constructor(private readonly k: Executor) {}

  async insert(row: ApiKeyRecord): Promise<void> {
    await this.k.insertInto('api_keys').values(row).execute()
  }

  byId(id: string): Promise<ApiKeyRecord | undefined> {
    return this.k.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** Newest first, within the node ids the credential reaches (null = all). */
  list(workspaceId: string, scopeIds: string[] | null, page: PageRequest): Promise<ApiKeyRecord[]> {
    const q = withinNodes(this.k.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId), 'node_id', scopeIds)
    return paged(q, page, 'desc').execute()
  }

  async count(workspaceId: string, scopeIds: string[] | null): Promise<number> {
    const r = await withinNodes(this.k.selectFrom('api_keys').where('workspace_id', '=', workspaceId), 'node_id', scopeIds)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** Unrevoked keys pinned at a node (they block deleting it). */
  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    const r = await this.k
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('node_id', '=', nodeId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  async setSecret(id: string, preview: string, secretHash: string): Promise<void> {
    await this.k.updateTable('api_keys').set({ preview, secret_hash: secretHash }).where('id', '=', id).execute()
  }

  /** Revokes the key and every key created under it (children, grandchildren…) not yet revoked. */
  async revokeTree(id: string, at: string): Promise<void> {
    await sql`WITH RECURSIVE tree(id) AS (SELECT CAST(${id} AS TEXT) UNION SELECT k.id FROM api_keys k JOIN tree ON k.created_by = 'apikey:' || tree.id)
       UPDATE api_keys SET revoked_at = ${at} WHERE id IN (SELECT id FROM tree) AND revoked_at IS NULL`.execute(this.k)
  }

  /** Key `parentId` and the keys above it on its creator chain, nearest first (at most 64 deep). */
  async ancestors(parentId: string): Promise<ApiKeyAncestor[]> {
    const r = await sql<ApiKeyAncestor>`WITH RECURSIVE up(id, depth) AS (
         SELECT CAST(${parentId} AS TEXT), 0
         UNION ALL SELECT substr(k.created_by, 8), up.depth + 1 FROM api_keys k JOIN up ON k.id = up.id WHERE k.created_by LIKE 'apikey:%' AND up.depth < 64)
       SELECT k.id, k.revoked_at, k.expires_at, k.created_by FROM api_keys k JOIN up ON k.id = up.id ORDER BY up.depth`.execute(this.k)
    return r.rows
  }

  /** Candidates for a presented secret (the preview is not unique; the hash decides). */
  byPreview(preview: string): Promise<ApiKeyAuthRecord[]> {
    return this.k.selectFrom('api_keys').select(AUTH_COLUMNS).where('preview', '=', preview).execute()
  }

  authById(id: string): Promise<ApiKeyAuthRecord | undefined> {
    return this.k.selectFrom('api_keys').select(AUTH_COLUMNS).where('id', '=', id).executeTakeFirst()
  }

  /** Writes last uses (never moving one backwards); run it inside a transaction for one batch. */
  async touchLastUsed(batch: [id: string, at: string][], k: Executor = this.k): Promise<void> {
    for (const [id, at] of batch) {
      await k
        .updateTable('api_keys')
        .set({ last_used_at: at })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
        .execute()
    }
  }

  /** Revoked keys pinned at `nodeId` no longer act anywhere: unpin them so the node can go. */
  async unpinRevoked(workspaceId: string, nodeId: string, k: Executor = this.k): Promise<void> {
    await k
      .updateTable('api_keys')
      .set({ node_id: null })
      .where('node_id', '=', nodeId)
      .where('workspace_id', '=', workspaceId)
      .where('revoked_at', 'is not', null)
      .execute()
  }
}
