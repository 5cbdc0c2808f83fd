// The only code that reads or writes `agent_releases`: packed agent tarballs uploaded with
// their signature (the bytes are in the file store, by sha256).
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { AgentReleasesTable } from './tables.js'
import { paged } from '../../platform/db/keyset.js'
import type { PageRequest } from '../../platform/paging.js'

export type AgentReleaseRow = Selectable<AgentReleasesTable>

export class AgentReleaseRepository {
  constructor(private readonly k: Executor) {}

  async insert(row: AgentReleaseRow): Promise<void> {
    await this.k.insertInto('agent_releases').values(row).execute()
  }

  get(workspaceId: string, id: string): Promise<AgentReleaseRow | undefined> {
    return this.k.selectFrom('agent_releases').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst()
  }

  /** By id in any workspace (the device download checks the screen's workspace itself). */
  byId(id: string): Promise<AgentReleaseRow | undefined> {
    return this.k.selectFrom('agent_releases').selectAll().where('id', '=', id).executeTakeFirst()
  }

  find(workspaceId: string, version: string, arch: string): Promise<AgentReleaseRow | undefined> {
    return this.k
      .selectFrom('agent_releases')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('version', '=', version)
      .where('arch', '=', arch)
      .executeTakeFirst()
  }

  /** The releases of a version, one per architecture. */
  ofVersion(workspaceId: string, version: string): Promise<AgentReleaseRow[]> {
    return this.k.selectFrom('agent_releases').selectAll().where('workspace_id', '=', workspaceId).where('version', '=', version).orderBy('arch').execute()
  }

  /** Newest first (ids are time-ordered). */
  list(workspaceId: string, page: PageRequest, version?: string): Promise<AgentReleaseRow[]> {
    let q = this.k.selectFrom('agent_releases').selectAll().where('workspace_id', '=', workspaceId)
    if (version !== undefined) q = q.where('version', '=', version)
    return paged(q, page, 'desc').execute()
  }

  async count(workspaceId: string, version?: string): Promise<number> {
    let q = this.k
      .selectFrom('agent_releases')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
    if (version !== undefined) q = q.where('version', '=', version)
    return Number((await q.executeTakeFirstOrThrow()).n)
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    const r = await this.k.deleteFrom('agent_releases').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }
}
