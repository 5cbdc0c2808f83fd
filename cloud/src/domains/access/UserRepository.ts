// The only code that reads or writes `users`, `sessions` and users' invites and sign-in devices.
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { SessionsTable, SignInDevicesTable, UserInvitesTable, UsersTable } from './tables.js'
import type { PageRequest } from '../../platform/paging.js'
import { paged } from '../../platform/db/keyset.js'

export type UserRecord = Selectable<UsersTable>
export type SessionRecord = Selectable<SessionsTable>
export type InviteRecord = Selectable<UserInvitesTable>
export type DeviceRecord = Selectable<SignInDevicesTable>

export class UserRepository {
  constructor(private readonly k: Executor) {}

  byId(workspaceId: string, id: string, k: Executor = this.k): Promise<UserRecord | undefined> {
    return k.selectFrom('users').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  byEmailIn(workspaceId: string, email: string, k: Executor = this.k): Promise<UserRecord | undefined> {
    return k.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where('email', '=', email).executeTakeFirst()
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

  /** Deletes the user, every session of theirs and their invites. */
  async delete(id: string, k: Executor = this.k): Promise<void> {
    await k.deleteFrom('sessions').where('user_id', '=', id).execute()
    await k.deleteFrom('user_invites').where('user_id', '=', id).execute()
    await k.deleteFrom('users').where('id', '=', id).execute()
  }

  /** Per user, when their newest session opened (sign-ins, and the session an invite hands out). */
  async lastSessions(userIds: readonly string[]): Promise<Map<string, string>> {
    if (userIds.length === 0) return new Map()
    const rows = await this.k
      .selectFrom('sessions')
      .select((eb) => ['user_id', eb.fn.max('created_at').as('at')])
      .where('user_id', 'in', [...userIds])
      .groupBy('user_id')
      .execute()
    return new Map(rows.map((r) => [r.user_id, String(r.at)]))
  }

  async insertSession(row: SessionRecord, k: Executor = this.k): Promise<void> {
    await k.insertInto('sessions').values(row).execute()
  }

  sessionsByLookup(lookup: string): Promise<SessionRecord[]> {
    return this.k.selectFrom('sessions').selectAll().where('lookup', '=', lookup).execute()
  }

  /** The users with this address, in every workspace (sign-in), with their workspace's name. */
  byEmail(email: string): Promise<(UserRecord & { workspace_name: string })[]> {
    return this.k
      .selectFrom('users')
      .innerJoin('workspaces', 'workspaces.id', 'users.workspace_id')
      .selectAll('users')
      .select('workspaces.name as workspace_name')
      .where('users.email', '=', email)
      .orderBy('users.id')
      .execute()
  }

  async setPassword(id: string, hash: string, at: string, k: Executor = this.k): Promise<void> {
    await k.updateTable('users').set({ password_hash: hash, password_set_at: at }).where('id', '=', id).execute()
  }

  async revokeSession(id: string, at: string): Promise<void> {
    await this.k.updateTable('sessions').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute()
  }

  /** Revokes every open session of the user but `exceptId`'s; answers how many. */
  async revokeUserSessions(userId: string, at: string, exceptId?: string, k: Executor = this.k): Promise<number> {
    let q = k.updateTable('sessions').set({ revoked_at: at }).where('user_id', '=', userId).where('revoked_at', 'is', null)
    if (exceptId) q = q.where('id', '!=', exceptId)
    const r = await q.executeTakeFirst()
    return Number(r.numUpdatedRows)
  }

  async insertInvite(row: InviteRecord, k: Executor = this.k): Promise<void> {
    await k.insertInto('user_invites').values(row).execute()
  }

  invitesByLookup(lookup: string, k: Executor = this.k): Promise<InviteRecord[]> {
    return k.selectFrom('user_invites').selectAll().where('lookup', '=', lookup).execute()
  }

  /** Marks the user's unused invites used (a new invite replaces them; an accepted one ends the rest); answers how many. */
  async closeInvites(userId: string, at: string, k: Executor = this.k): Promise<number> {
    const r = await k.updateTable('user_invites').set({ used_at: at }).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst()
    return Number(r.numUpdatedRows)
  }

  async insertDevice(row: DeviceRecord): Promise<void> {
    await this.k.insertInto('sign_in_devices').values(row).execute()
  }

  devicesByLookup(lookup: string): Promise<DeviceRecord[]> {
    return this.k.selectFrom('sign_in_devices').selectAll().where('lookup', '=', lookup).execute()
  }

  /** Drops invites and sign-in devices past their expiry and sessions expired before `cutoff`; answers how many rows went. */
  async purgeExpired(now: string, cutoff: string): Promise<number> {
    const a = await this.k.deleteFrom('user_invites').where('expires_at', '<', now).executeTakeFirst()
    const b = await this.k.deleteFrom('sign_in_devices').where('expires_at', '<', now).executeTakeFirst()
    const c = await this.k.deleteFrom('sessions').where('expires_at', '<', cutoff).executeTakeFirst()
    return Number(a.numDeletedRows) + Number(b.numDeletedRows) + Number(c.numDeletedRows)
  }
}
