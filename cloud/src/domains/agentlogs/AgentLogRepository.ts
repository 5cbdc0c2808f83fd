// The only code that reads or writes `agent_logs` (requests for a screen's log lines and the
// lines its agent uploaded). The `lines` column (up to 1 MiB) is read only by the one GET
// that serves it: lists, job messages and state checks leave it out.
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { AgentLogsTable } from './tables.js'
import type { PageRequest } from '../../platform/paging.js'
import { paged } from '../../platform/db/keyset.js'

export type AgentLogRow = Selectable<AgentLogsTable>
/** A row without its lines. */
export type AgentLogSummaryRow = Omit<AgentLogRow, 'lines'>

const SUMMARY = [
  'id',
  'workspace_id',
  'screen_id',
  'state',
  'reason',
  'max_lines',
  'since',
  'requested_at',
  'sent_at',
  'completed_at',
  'uploaded_at',
  'line_count',
  'truncated',
  'size_bytes',
] as const satisfies readonly (keyof AgentLogSummaryRow)[]

const PENDING = 'pending'

export class AgentLogRepository {
  constructor(private readonly k: Executor) {}

  async insert(row: AgentLogRow): Promise<void> {
    await this.k.insertInto('agent_logs').values(row).execute()
  }

  summary(id: string): Promise<AgentLogSummaryRow | undefined> {
    return this.k.selectFrom('agent_logs').select(SUMMARY).where('id', '=', id).executeTakeFirst()
  }

  withLines(id: string): Promise<AgentLogRow | undefined> {
    return this.k.selectFrom('agent_logs').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** A screen's requests, newest first (ids are time-ordered). */
  listForScreen(workspaceId: string, screenId: string, page: PageRequest): Promise<AgentLogSummaryRow[]> {
    const q = this.k.selectFrom('agent_logs').select(SUMMARY).where('workspace_id', '=', workspaceId).where('screen_id', '=', screenId)
    return paged(q, page, 'desc').execute()
  }

  async countForScreen(workspaceId: string, screenId: string): Promise<number> {
    const r = await this.k
      .selectFrom('agent_logs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('screen_id', '=', screenId)
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** Pending requests of the screen asked at or after `requestedSince` (the TTL cutoff), oldest first. */
  openFor(screenId: string, requestedSince: string): Promise<AgentLogSummaryRow[]> {
    return this.k
      .selectFrom('agent_logs')
      .select(SUMMARY)
      .where('screen_id', '=', screenId)
      .where('state', '=', PENDING)
      .where('requested_at', '>=', requestedSince)
      .orderBy('requested_at')
      .orderBy('id')
      .execute()
  }

  /** openFor of several screens, one read per 500 screens, by screen. */
  async openForMany(screenIds: readonly string[], requestedSince: string): Promise<Map<string, AgentLogSummaryRow[]>> {
    const out = new Map<string, AgentLogSummaryRow[]>()
    for (let i = 0; i < screenIds.length; i += 500) {
      const rows = await this.k
        .selectFrom('agent_logs')
        .select(SUMMARY)
        .where('screen_id', 'in', screenIds.slice(i, i + 500))
        .where('state', '=', PENDING)
        .where('requested_at', '>=', requestedSince)
        .orderBy('requested_at')
        .orderBy('id')
        .execute()
      for (const r of rows) {
        const list = out.get(r.screen_id)
        if (list) list.push(r)
        else out.set(r.screen_id, [r])
      }
    }
    return out
  }

  async markSent(id: string, at: string): Promise<void> {
    await this.k.updateTable('agent_logs').set({ sent_at: at }).where('id', '=', id).where('state', '=', PENDING).where('sent_at', 'is', null).execute()
  }

  /** Closes a pending request; false when it was already closed (a late or repeated answer). */
  async complete(
    id: string,
    patch: Pick<AgentLogRow, 'state' | 'reason' | 'completed_at'> &
      Partial<Pick<AgentLogRow, 'uploaded_at' | 'line_count' | 'truncated' | 'size_bytes' | 'lines'>>,
  ): Promise<boolean> {
    const r = await this.k.updateTable('agent_logs').set(patch).where('id', '=', id).where('state', '=', PENDING).executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  /** Pending requests asked before `cutoff` become `expired`; answers how many. */
  async expireOpen(cutoff: string, reason: string, at: string): Promise<number> {
    const r = await this.k
      .updateTable('agent_logs')
      .set({ state: 'expired', reason, completed_at: at })
      .where('state', '=', PENDING)
      .where('requested_at', '<', cutoff)
      .executeTakeFirst()
    return Number(r.numUpdatedRows)
  }

  /** The open (pending) request of the screen, if any (one at most: the agent_logs_open index). */
  openOf(screenId: string): Promise<AgentLogSummaryRow | undefined> {
    return this.k.selectFrom('agent_logs').select(SUMMARY).where('screen_id', '=', screenId).where('state', '=', PENDING).executeTakeFirst()
  }

  /** Bytes of the lines stored for a screen or a workspace (one aggregate: no rows come back). */
  async storedBytes(by: { screenId: string } | { workspaceId: string }): Promise<number> {
    let q = this.k
      .selectFrom('agent_logs')
      .select((eb) => eb.fn.sum<number | string | null>('size_bytes').as('n'))
      .where('lines', 'is not', null)
    q = 'screenId' in by ? q.where('screen_id', '=', by.screenId) : q.where('workspace_id', '=', by.workspaceId)
    return Number((await q.executeTakeFirst())?.n ?? 0)
  }

  /** The uploads holding lines of a screen or a workspace, newest upload first: id and bytes. */
  stored(by: { screenId: string } | { workspaceId: string }): Promise<{ id: string; size_bytes: number | null }[]> {
    let q = this.k.selectFrom('agent_logs').select(['id', 'size_bytes']).where('lines', 'is not', null)
    q = 'screenId' in by ? q.where('screen_id', '=', by.screenId) : q.where('workspace_id', '=', by.workspaceId)
    return q.orderBy('uploaded_at', 'desc').orderBy('id', 'desc').execute()
  }

  /** Deletes these requests, lines and all; answers how many. */
  async deleteIds(ids: readonly string[]): Promise<number> {
    let n = 0
    for (let i = 0; i < ids.length; i += 500) {
      const r = await this.k
        .deleteFrom('agent_logs')
        .where('id', 'in', ids.slice(i, i + 500))
        .executeTakeFirst()
      n += Number(r.numDeletedRows)
    }
    return n
  }

  /** Deletes the requests asked before `cutoff`, lines and all; answers how many. */
  async deleteBefore(cutoff: string): Promise<number> {
    const r = await this.k.deleteFrom('agent_logs').where('requested_at', '<', cutoff).executeTakeFirst()
    return Number(r.numDeletedRows)
  }
}
