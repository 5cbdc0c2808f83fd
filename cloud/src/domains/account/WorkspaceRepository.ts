// The only code that reads or writes `workspaces`.
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { WorkspacesTable } from './tables.js'

export type WorkspaceRecord = Selectable<WorkspacesTable>

export class WorkspaceRepository {
  constructor(private readonly k: Executor) {}

  async insert(row: { id: string; name: string; region: string; created_at: string }): Promise<void> {
    await this.k
      .insertInto('workspaces')
      .values({ ...row, status: 'active' })
      .execute()
  }

  byId(id: string): Promise<WorkspaceRecord | undefined> {
    return this.k.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst()
  }

  async count(): Promise<number> {
    const r = await this.k
      .selectFrom('workspaces')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }
}
