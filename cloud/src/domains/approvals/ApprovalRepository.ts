// The only code that reads or writes `approval_policies` and `approval_requests`.
import type { Insertable, Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { ApprovalPoliciesTable, ApprovalRequestsTable } from './tables.js'
import type { PageRequest } from '../../platform/paging.js'
import { paged } from '../../platform/db/keyset.js'

export type ApprovalPolicyRow = Selectable<ApprovalPoliciesTable>
export type ApprovalRequestRow = Selectable<ApprovalRequestsTable>
export type NewApprovalRequest = Insertable<ApprovalRequestsTable>

export interface ApprovalListFilter {
  state?: string | undefined
  /** Home nodes the credential reaches; null = all (requests at the root count only then). */
  scopeIds: string[] | null
}

export class ApprovalRepository {
  constructor(private readonly k: Executor) {}

  policies(workspaceId: string): Promise<ApprovalPolicyRow[]> {
    return this.k.selectFrom('approval_policies').selectAll().where('workspace_id', '=', workspaceId).execute()
  }

  policy(workspaceId: string, nodeId: string): Promise<ApprovalPolicyRow | undefined> {
    return this.k.selectFrom('approval_policies').selectAll().where('workspace_id', '=', workspaceId).where('node_id', '=', nodeId).executeTakeFirst()
  }

  async savePolicy(row: ApprovalPolicyRow): Promise<void> {
    const { workspace_id: _w, node_id: _n, ...rest } = row
    await this.k
      .insertInto('approval_policies')
      .values(row)
      .onConflict((oc) => oc.columns(['workspace_id', 'node_id']).doUpdateSet(rest))
      .execute()
  }

  async deletePolicy(workspaceId: string, nodeId: string): Promise<void> {
    await this.k.deleteFrom('approval_policies').where('workspace_id', '=', workspaceId).where('node_id', '=', nodeId).execute()
  }

  async insert(row: NewApprovalRequest, k: Executor = this.k): Promise<void> {
    await k.insertInto('approval_requests').values(row).execute()
  }

  byId(workspaceId: string, id: string, k: Executor = this.k): Promise<ApprovalRequestRow | undefined> {
    return k.selectFrom('approval_requests').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  /** The newest request about an item in one of `states`. */
  latestFor(workspaceId: string, kind: string, contentId: string, action: string | null, states: string[], k: Executor = this.k) {
    let q = k
      .selectFrom('approval_requests')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('content_kind', '=', kind)
      .where('content_id', '=', contentId)
      .where('state', 'in', states)
    if (action) q = q.where('action', '=', action)
    return q.orderBy('id', 'desc').limit(1).executeTakeFirst()
  }

  list(workspaceId: string, f: ApprovalListFilter, page: PageRequest): Promise<ApprovalRequestRow[]> {
    let q = this.k.selectFrom('approval_requests').selectAll().where('workspace_id', '=', workspaceId)
    if (f.state) q = q.where('state', '=', f.state)
    if (f.scopeIds !== null) q = f.scopeIds.length ? q.where('node_id', 'in', f.scopeIds) : q.where((eb) => eb.val(1), '=', 0)
    return paged(q, page, 'desc').execute()
  }

  /**
   * Moves a pending request on (state, level, decisions); false when it was no longer
   * pending at `expectLevel` (a concurrent decision got there first).
   */
  async decide(
    workspaceId: string,
    id: string,
    expectLevel: number,
    patch: Pick<ApprovalRequestRow, 'state' | 'current_level' | 'decisions' | 'updated_at'>,
    k: Executor = this.k,
  ): Promise<boolean> {
    const r = await k
      .updateTable('approval_requests')
      .set(patch)
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('state', '=', 'pending')
      .where('current_level', '=', expectLevel)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  /** A pending 'create' request follows edits of its not yet approved item. */
  async refresh(workspaceId: string, id: string, patch: Pick<ApprovalRequestRow, 'content_name' | 'changes' | 'updated_at'>, k: Executor = this.k) {
    await k.updateTable('approval_requests').set(patch).where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
  }
}
