// The only code that reads or writes the single sign-on tables.
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { SsoFlowsTable, SsoProvidersTable } from './tables.js'

export type ProviderRecord = Selectable<SsoProvidersTable>
export type FlowRecord = Selectable<SsoFlowsTable>

export class SsoRepository {
  constructor(private readonly k: Executor) {}

  provider(workspaceId: string, k: Executor = this.k): Promise<ProviderRecord | undefined> {
    return k.selectFrom('sso_providers').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  async domains(workspaceId: string, k: Executor = this.k): Promise<string[]> {
    const rows = await k.selectFrom('sso_domains').select('domain').where('workspace_id', '=', workspaceId).orderBy('domain').execute()
    return rows.map((r) => r.domain)
  }

  /** The workspace that claimed `domain`, if one did. */
  async domainOwner(domain: string, k: Executor = this.k): Promise<string | undefined> {
    return (await k.selectFrom('sso_domains').select('workspace_id').where('domain', '=', domain).executeTakeFirst())?.workspace_id
  }

  /** Writes the provider and its domains (the caller's transaction). */
  async put(row: ProviderRecord, domains: string[], k: Executor): Promise<void> {
    await k.deleteFrom('sso_providers').where('workspace_id', '=', row.workspace_id).execute()
    await k.insertInto('sso_providers').values(row).execute()
    await k.deleteFrom('sso_domains').where('workspace_id', '=', row.workspace_id).execute()
    if (domains.length)
      await k
        .insertInto('sso_domains')
        .values(domains.map((domain) => ({ domain, workspace_id: row.workspace_id })))
        .execute()
  }

  /** Removes the provider, its domains and its sign-ins under way; answers whether there was one. */
  async remove(workspaceId: string, k: Executor): Promise<boolean> {
    const r = await k.deleteFrom('sso_providers').where('workspace_id', '=', workspaceId).executeTakeFirst()
    await k.deleteFrom('sso_domains').where('workspace_id', '=', workspaceId).execute()
    await k.deleteFrom('sso_flows').where('workspace_id', '=', workspaceId).execute()
    await k.deleteFrom('sso_saml_requests').where('workspace_id', '=', workspaceId).execute()
    return Number(r.numDeletedRows) > 0
  }

  async insertFlow(row: FlowRecord): Promise<void> {
    await this.k.insertInto('sso_flows').values(row).execute()
  }

  /** Marks the flow used and answers it, when it was open: one use, even with two callbacks at once. */
  async takeFlow(stateHash: string, now: string): Promise<FlowRecord | undefined> {
    const r = await this.k.updateTable('sso_flows').set({ used_at: now }).where('state_hash', '=', stateHash).where('used_at', 'is', null).executeTakeFirst()
    if (Number(r.numUpdatedRows) !== 1) return undefined
    return this.k.selectFrom('sso_flows').selectAll().where('state_hash', '=', stateHash).executeTakeFirst()
  }

  async purgeFlows(now: string): Promise<number> {
    const r = await this.k.deleteFrom('sso_flows').where('expires_at', '<', now).executeTakeFirst()
    return Number(r.numDeletedRows)
  }

  /** The stored key of `name`, made from `candidate` by the first instance to ask. */
  async key(name: string, candidate: string): Promise<string> {
    await this.k
      .insertInto('sso_keys')
      .values({ name, value: candidate })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute()
    return (await this.k.selectFrom('sso_keys').select('value').where('name', '=', name).executeTakeFirstOrThrow()).value
  }

  /** Whether SCIM deactivated the user. */
  async deactivated(userId: string): Promise<boolean> {
    const r = await this.k.selectFrom('scim_users').select('active').where('user_id', '=', userId).executeTakeFirst()
    return r !== undefined && Number(r.active) === 0
  }

  async insertSamlRequest(row: { id: string; workspace_id: string; created_at: string; expires_at: string }): Promise<void> {
    await this.k
      .insertInto('sso_saml_requests')
      .values({ ...row, used_at: null })
      .execute()
  }

  /** Marks the AuthnRequest answered, when it was the workspace's, open and not expired: one use, even with two answers at once. */
  async takeSamlRequest(id: string, workspaceId: string, now: string): Promise<boolean> {
    const r = await this.k
      .updateTable('sso_saml_requests')
      .set({ used_at: now })
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  async samlRequestKnown(id: string): Promise<boolean> {
    return (await this.k.selectFrom('sso_saml_requests').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
  }

  async purgeSamlRequests(now: string): Promise<number> {
    const r = await this.k.deleteFrom('sso_saml_requests').where('expires_at', '<', now).executeTakeFirst()
    return Number(r.numDeletedRows)
  }
}
