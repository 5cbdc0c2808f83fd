// The only code that reads or writes `nodes` (the location tree).
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { DB } from '../../platform/db/schema.js'
import type { NodeRow } from './tables.js'
import type { PageRequest } from '../../platform/paging.js'
import { paged, withinNodes } from '../../platform/db/keyset.js'

/** Tables whose rows have an id, a workspace and a home node. */
export type HomedTable = 'screens' | 'casts' | 'emergencies' | 'serial_templates' | 'api_keys' | 'media' | 'content_items' | 'alert_rules'

export class NodeRepository {
  constructor(private readonly k: Executor) {}

  byId(workspaceId: string, id: string, k: Executor = this.k): Promise<NodeRow | undefined> {
    return k.selectFrom('nodes').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  async parentOf(workspaceId: string, id: string): Promise<{ parent_id: string | null } | undefined> {
    return this.k.selectFrom('nodes').select('parent_id').where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  /** Every node of the workspace as (id, parent): enough to walk the tree in memory. */
  edges(workspaceId: string): Promise<{ id: string; parent_id: string | null }[]> {
    return this.k.selectFrom('nodes').select(['id', 'parent_id']).where('workspace_id', '=', workspaceId).execute()
  }

  /**
   * The row `id` of a table whose rows have a home node, in the workspace. The one place a
   * service's row is read by id for the reachability check; the table's own repository
   * still owns every other read and write.
   */
  async homedRow<T extends HomedTable>(table: T, workspaceId: string, id: string): Promise<Selectable<DB[T]> | undefined> {
    // Typed as one of the tables: the columns used here exist in all of them.
    const q = this.k
      .selectFrom(table as 'screens')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
    return (await q.executeTakeFirst()) as Selectable<DB[T]> | undefined
  }

  private filtered(workspaceId: string, f: NodeFilter) {
    let q = withinNodes(this.k.selectFrom('nodes').where('workspace_id', '=', workspaceId), 'id', f.scopeIds)
    if (f.parentId !== undefined) q = f.parentId === null ? q.where('parent_id', 'is', null) : q.where('parent_id', '=', f.parentId)
    if (f.search) q = q.where((eb) => eb(eb.fn('lower', ['name']), 'like', `%${f.search!.toLowerCase()}%`))
    return q
  }

  list(workspaceId: string, f: NodeFilter, page: PageRequest): Promise<NodeRow[]> {
    return paged(this.filtered(workspaceId, f).selectAll(), page, 'desc').execute()
  }

  async count(workspaceId: string, f: NodeFilter): Promise<number> {
    const r = await this.filtered(workspaceId, f)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  async insert(row: NodeRow): Promise<void> {
    await this.k.insertInto('nodes').values(row).execute()
  }

  /** Every location's parent, point and geocodes (the CAP feeds' area matching). */
  geoRows(workspaceId: string): Promise<{ id: string; parent_id: string | null; geo: string | null; geocodes: string | null }[]> {
    return this.k.selectFrom('nodes').select(['id', 'parent_id', 'geo', 'geocodes']).where('workspace_id', '=', workspaceId).execute()
  }

  async update(
    workspaceId: string,
    id: string,
    patch: Pick<NodeRow, 'name' | 'parent_id' | 'kind' | 'updated_at'> & Partial<Pick<NodeRow, 'geo' | 'geocodes'>>,
  ): Promise<void> {
    await this.k.updateTable('nodes').set(patch).where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
  }

  async childCount(workspaceId: string, id: string): Promise<number> {
    const r = await this.k
      .selectFrom('nodes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('parent_id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  async delete(workspaceId: string, id: string, k: Executor = this.k): Promise<void> {
    await k.deleteFrom('nodes').where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
  }
}

export interface NodeFilter {
  /** Node ids the credential reaches; null = all. */
  scopeIds: string[] | null
  /** undefined = any parent, null = top level. */
  parentId?: string | null
  search?: string
}
