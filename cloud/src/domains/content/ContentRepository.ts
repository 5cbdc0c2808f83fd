// The only code that reads or writes `content_items`, `content_shares` and `content_refs`,
// and the content library's reads of `media` (media's own writes stay in MediaService).
import type { DB } from '../../platform/db/schema.js'
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { ContentItemsTable } from './tables.js'
import type { PageRequest } from '../../platform/paging.js'
import { paged } from '../../platform/db/keyset.js'

export type ContentItemRow = Selectable<ContentItemsTable>
/** A media row (the media domain's table, read here through the database's type: no import of media, which imports content). */
export type MediaRow = Selectable<DB['media']>

export interface ContentListFilter {
  kind: string
  /** Node ids the credential reaches; null = all. */
  scopeIds: string[] | null
  search?: string | undefined
}

/** Ids per `in (…)` list. */
const CHUNK = 400

export class ContentRepository {
  constructor(private readonly k: Executor) {}

  /**
   * A raw-SQL fragment (`?` placeholders) keeping rows of `table` whose home is one of
   * `ids` or that are shared into them: for code still written against the raw interface.
   */
  static visibleSql(workspaceId: string, kind: string, table: string, ids: string[] | null): { sql: string; params: string[] } {
    if (ids === null) return { sql: '', params: [] }
    if (!ids.length) return { sql: ' AND 1 = 0', params: [] }
    const marks = ids.map(() => '?').join(',')
    return {
      sql: ` AND (${table}.node_id IN (${marks}) OR ${table}.id IN (SELECT content_id FROM content_shares WHERE workspace_id = ? AND content_kind = ? AND node_id IN (${marks})))`,
      params: [...ids, workspaceId, kind, ...ids],
    }
  }

  mediaById(workspaceId: string, id: string): Promise<MediaRow | undefined> {
    return this.k.selectFrom('media').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  itemById(workspaceId: string, id: string, kind?: string): Promise<ContentItemRow | undefined> {
    let q = this.k.selectFrom('content_items').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId)
    if (kind !== undefined) q = q.where('kind', '=', kind)
    return q.executeTakeFirst()
  }

  /** Bodies of every folder of the workspace (JSON is read whole, never queried inside). */
  async folderBodies(workspaceId: string): Promise<string[]> {
    const rows = await this.k.selectFrom('content_items').select('body').where('workspace_id', '=', workspaceId).where('kind', '=', 'folder').execute()
    return rows.map((r) => r.body)
  }

  /** The zones of the workspace's largest layout (0 without one): what a screen of it can play at once. */
  async mostLayoutZones(workspaceId: string): Promise<number> {
    const rows = await this.k.selectFrom('content_items').select('body').where('workspace_id', '=', workspaceId).where('kind', '=', 'layout').execute()
    let most = 0
    for (const r of rows) {
      const zones = (JSON.parse(r.body) as { zones?: unknown }).zones
      if (Array.isArray(zones)) most = Math.max(most, zones.length)
    }
    return most
  }

  private filtered(workspaceId: string, f: ContentListFilter) {
    let q = this.k.selectFrom('content_items').where('workspace_id', '=', workspaceId).where('kind', '=', f.kind)
    const ids = f.scopeIds
    if (ids !== null) {
      if (!ids.length) q = q.where((eb) => eb.val(1), '=', 0)
      else
        q = q.where((eb) =>
          eb.or([
            eb('node_id', 'in', ids),
            eb(
              'id',
              'in',
              eb
                .selectFrom('content_shares')
                .select('content_id')
                .where('workspace_id', '=', workspaceId)
                .where('content_kind', '=', f.kind)
                .where('node_id', 'in', ids),
            ),
          ]),
        )
    }
    if (f.search) q = q.where((eb) => eb(eb.fn('lower', ['name']), 'like', `%${f.search!.toLowerCase()}%`))
    return q
  }

  list(workspaceId: string, f: ContentListFilter, page: PageRequest): Promise<ContentItemRow[]> {
    return paged(this.filtered(workspaceId, f).selectAll(), page, 'desc').execute()
  }

  async count(workspaceId: string, f: ContentListFilter): Promise<number> {
    const r = await this.filtered(workspaceId, f)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  async insertItem(row: ContentItemRow, k: Executor = this.k): Promise<void> {
    await k.insertInto('content_items').values(row).execute()
  }

  async updateItem(
    workspaceId: string,
    id: string,
    patch: Pick<ContentItemRow, 'name' | 'node_id' | 'body' | 'updated_at'>,
    k: Executor = this.k,
  ): Promise<void> {
    await k.updateTable('content_items').set(patch).where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
  }

  async deleteItem(workspaceId: string, id: string, k: Executor = this.k): Promise<void> {
    await k.deleteFrom('content_items').where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
  }

  /** Replaces the outgoing references of `id`. */
  async writeRefs(workspaceId: string, kind: string, id: string, refs: { kind: string; id: string }[], k: Executor = this.k): Promise<void> {
    await k.deleteFrom('content_refs').where('from_id', '=', id).where('workspace_id', '=', workspaceId).execute()
    const unique = new Map(refs.map((r) => [`${r.kind}:${r.id}`, r]))
    if (!unique.size) return
    await k
      .insertInto('content_refs')
      .values([...unique.values()].map((r) => ({ workspace_id: workspaceId, from_kind: kind, from_id: id, to_kind: r.kind, to_id: r.id })))
      .execute()
  }

  /** Up to `limit` items referring to (kind, id). */
  referrers(workspaceId: string, kind: string, id: string, limit: number): Promise<{ from_kind: string; from_id: string }[]> {
    return this.k
      .selectFrom('content_refs')
      .select(['from_kind', 'from_id'])
      .where('workspace_id', '=', workspaceId)
      .where('to_kind', '=', kind)
      .where('to_id', '=', id)
      .orderBy('from_id')
      .limit(limit)
      .execute()
  }

  async mediaInFolder(workspaceId: string, folderId: string): Promise<number> {
    const r = await this.k
      .selectFrom('media')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('folder_id', '=', folderId)
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** Drops an item's shares and outgoing references. */
  async forget(workspaceId: string, kind: string, id: string, k: Executor = this.k): Promise<void> {
    await k.deleteFrom('content_shares').where('workspace_id', '=', workspaceId).where('content_kind', '=', kind).where('content_id', '=', id).execute()
    await k.deleteFrom('content_refs').where('workspace_id', '=', workspaceId).where('from_id', '=', id).execute()
  }

  /** Items, media and shares at a node. */
  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    let n = 0
    for (const table of ['content_items', 'media', 'content_shares'] as const) {
      const r = await this.k
        .selectFrom(table as 'content_items')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('node_id', '=', nodeId)
        .executeTakeFirstOrThrow()
      n += Number(r.n)
    }
    return n
  }

  // ---- shares ------------------------------------------------------------------------

  shares(workspaceId: string, kind: string, id: string): Promise<{ node_id: string; created_at: string }[]> {
    return this.k
      .selectFrom('content_shares')
      .select(['node_id', 'created_at'])
      .where('workspace_id', '=', workspaceId)
      .where('content_kind', '=', kind)
      .where('content_id', '=', id)
      .orderBy('created_at')
      .orderBy('node_id')
      .execute()
  }

  async sharesOf(workspaceId: string, kind: string, ids: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>()
    if (!ids.length) return out
    const rows = await this.k
      .selectFrom('content_shares')
      .select(['content_id', 'node_id'])
      .where('workspace_id', '=', workspaceId)
      .where('content_kind', '=', kind)
      .where('content_id', 'in', ids)
      .orderBy('created_at')
      .orderBy('node_id')
      .execute()
    for (const r of rows) out.set(r.content_id, [...(out.get(r.content_id) ?? []), r.node_id])
    return out
  }

  async share(workspaceId: string, kind: string, id: string, nodeId: string, at: string): Promise<void> {
    await this.k
      .insertInto('content_shares')
      .values({ workspace_id: workspaceId, content_kind: kind, content_id: id, node_id: nodeId, created_at: at })
      .onConflict((oc) => oc.doNothing())
      .execute()
  }

  async unshare(workspaceId: string, kind: string, id: string, nodeId: string): Promise<boolean> {
    const r = await this.k
      .deleteFrom('content_shares')
      .where('workspace_id', '=', workspaceId)
      .where('content_kind', '=', kind)
      .where('content_id', '=', id)
      .where('node_id', '=', nodeId)
      .executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  // ---- recall ------------------------------------------------------------------------

  /** Marks the row recalled unless it already is; false when it was. */
  async recall(
    table: 'media' | 'content_items',
    workspaceId: string,
    id: string,
    reason: string | null,
    by: string,
    at: string,
    k: Executor = this.k,
  ): Promise<boolean> {
    const r = await k
      .updateTable(table as 'content_items')
      .set({ recalled_at: at, recall_reason: reason, recalled_by: by, updated_at: at })
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('recalled_at', 'is', null)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  async restore(table: 'media' | 'content_items', workspaceId: string, id: string, at: string, k: Executor = this.k): Promise<boolean> {
    const r = await k
      .updateTable(table as 'content_items')
      .set({ recalled_at: null, recall_reason: null, recalled_by: null, updated_at: at })
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('recalled_at', 'is not', null)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  /** Items that contain any of `ids` (playlists, schedules, layouts: content_refs read upwards). */
  async containersOf(workspaceId: string, ids: string[]): Promise<string[]> {
    const out: string[] = []
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = await this.k
        .selectFrom('content_refs')
        .select('from_id')
        .distinct()
        .where('workspace_id', '=', workspaceId)
        .where('to_id', 'in', ids.slice(i, i + CHUNK))
        .execute()
      for (const r of rows) out.push(r.from_id)
    }
    return out
  }
}
