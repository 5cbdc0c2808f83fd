// The only code that reads or writes `users` and `sessions`.
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { SessionsTable, UsersTable } from '../../platform/db/schema.js'
import type { PageRequest } from '../../platform/paging.js'
import { paged } from '../../platform/db/keyset.js'

export type UserRecord = Selectable<UsersTable>
export type SessionRecord = Selectable<SessionsTable>

export class UserRepository {
  constructor(private readonly k: Executor) {}

  byId(workspaceId: string, id: string, k: Executor = this.k): Promise<UserRecord | undefined> {
    return k.selectFrom('users').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  /** Oldest first (ids are time-ordered). */
  list(workspaceId: string, page: PageRequest): Promise<UserRecord[]> {
    return paged(this.k.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId), page, 'asc').execute()
  }

  async count(workspaceId: string): Promise<number> {
    const r = await this.k
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  owners(workspaceId: string, k: Executor = this.k): Promise<UserRecord[]> {
    return k.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where('role', '=', 'owner').orderBy('id').execute()
  }

  /** E-mail addresses of the workspace's users with `role` (alert recipients such as `role:admin`). */
  async emailsWithRole(workspaceId: string, role: string): Promise<string[]> {
    const rows = await this.k.selectFrom('users').select('email').where('workspace_id', '=', workspaceId).where('role', '=', role).orderBy('id').execute()
    return rows.map((r) => r.email)
  }

  /**
   * The workspace's owners, locked until the transaction ends on PostgreSQL (SQLite runs one
   * writing transaction at a time), so two demotions cannot each leave the other as the last.
   */
  ownersForUpdate(workspaceId: string, k: Executor, postgres: boolean): Promise<UserRecord[]> {
    const q = k.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where('role', '=', 'owner').orderBy('id')
    return (postgres ? q.forUpdate() : q).execute()
  }

  async insert(row: UserRecord, k: Executor = this.k): Promise<void> {
    await k.insertInto('users').values(row).execute()
  }

  async update(id: string, set: { name?: string | null; role?: string }, k: Executor = this.k): Promise<void> {
    if (Object.keys(set).length === 0) return
    await k.updateTable('users').set(set).where('id', '=', id).execute()
  }

  /** Deletes the user and every session of theirs. */
  async delete(id: string, k: Executor = this.k): Promise<void> {
    await k.deleteFrom('sessions').where('user_id', '=', id).execute()
    await k.deleteFrom('users').where('id', '=', id).execute()
  }

  async insertSession(row: SessionRecord, k: Executor = this.k): Promise<void> {
    await k.insertInto('sessions').values(row).execute()
  }

  sessionsByLookup(lookup: string): Promise<SessionRecord[]> {
    return this.k.selectFrom('sessions').selectAll().where('lookup', '=', lookup).execute()
  }
}
