// The only code that reads or writes the SCIM tables (token, users' SCIM state, groups).
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { ScimGroupsTable, ScimUsersTable } from './tables.js'

export type ScimUserRecord = Selectable<ScimUsersTable>
export type ScimGroupRecord = Selectable<ScimGroupsTable>

export class ScimRepository {
  constructor(private readonly k: Executor) {}

  async putToken(row: { workspace_id: string; lookup: string; secret_hash: string; created_at: string }): Promise<void> {
    await this.k.deleteFrom('scim_tokens').where('workspace_id', '=', row.workspace_id).execute()
    await this.k.insertInto('scim_tokens').values(row).execute()
  }

  tokenByLookup(lookup: string): Promise<{ workspace_id: string; secret_hash: string } | undefined> {
    return this.k.selectFrom('scim_tokens').select(['workspace_id', 'secret_hash']).where('lookup', '=', lookup).executeTakeFirst()
  }

  async tokenCreatedAt(workspaceId: string): Promise<string | null> {
    return (await this.k.selectFrom('scim_tokens').select('created_at').where('workspace_id', '=', workspaceId).executeTakeFirst())?.created_at ?? null
  }

  async deleteToken(workspaceId: string): Promise<boolean> {
    const r = await this.k.deleteFrom('scim_tokens').where('workspace_id', '=', workspaceId).executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }

  users(workspaceId: string): Promise<ScimUserRecord[]> {
    return this.k.selectFrom('scim_users').selectAll().where('workspace_id', '=', workspaceId).execute()
  }

  user(userId: string): Promise<ScimUserRecord | undefined> {
    return this.k.selectFrom('scim_users').selectAll().where('user_id', '=', userId).executeTakeFirst()
  }

  async putUser(row: ScimUserRecord): Promise<void> {
    await this.k.deleteFrom('scim_users').where('user_id', '=', row.user_id).execute()
    await this.k.insertInto('scim_users').values(row).execute()
  }

  /** Forgets what SCIM knew of a user (deleted): its state and memberships. */
  async forgetUser(userId: string): Promise<void> {
    await this.k.deleteFrom('scim_users').where('user_id', '=', userId).execute()
    await this.k.deleteFrom('scim_group_members').where('user_id', '=', userId).execute()
  }

  groups(workspaceId: string): Promise<ScimGroupRecord[]> {
    return this.k.selectFrom('scim_groups').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute()
  }

  group(workspaceId: string, id: string): Promise<ScimGroupRecord | undefined> {
    return this.k.selectFrom('scim_groups').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst()
  }

  async insertGroup(row: ScimGroupRecord): Promise<void> {
    await this.k.insertInto('scim_groups').values(row).execute()
  }

  async updateGroup(id: string, set: { display_name?: string; external_id?: string | null; updated_at: string }): Promise<void> {
    await this.k.updateTable('scim_groups').set(set).where('id', '=', id).execute()
  }

  async deleteGroup(id: string): Promise<void> {
    await this.k.deleteFrom('scim_group_members').where('group_id', '=', id).execute()
    await this.k.deleteFrom('scim_groups').where('id', '=', id).execute()
  }

  /** Memberships of the workspace's groups. */
  members(workspaceId: string): Promise<{ group_id: string; user_id: string }[]> {
    return this.k
      .selectFrom('scim_group_members')
      .innerJoin('scim_groups', 'scim_groups.id', 'scim_group_members.group_id')
      .select(['scim_group_members.group_id', 'scim_group_members.user_id'])
      .where('scim_groups.workspace_id', '=', workspaceId)
      .orderBy('scim_group_members.user_id')
      .orderBy('scim_group_members.group_id')
      .execute()
  }

  async addMembers(groupId: string, userIds: string[]): Promise<void> {
    for (const userId of userIds)
      await this.k
        .insertInto('scim_group_members')
        .values({ group_id: groupId, user_id: userId })
        .onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing())
        .execute()
  }

  async removeMembers(groupId: string, userIds: string[] | 'all'): Promise<void> {
    let q = this.k.deleteFrom('scim_group_members').where('group_id', '=', groupId)
    if (userIds !== 'all') {
      if (!userIds.length) return
      q = q.where('user_id', 'in', userIds)
    }
    await q.execute()
  }

  /** The display names of the groups `userId` is a member of. */
  async groupNamesOf(userId: string): Promise<string[]> {
    const rows = await this.k
      .selectFrom('scim_group_members')
      .innerJoin('scim_groups', 'scim_groups.id', 'scim_group_members.group_id')
      .select('scim_groups.display_name')
      .where('scim_group_members.user_id', '=', userId)
      .execute()
    return rows.map((r) => r.display_name)
  }
}
