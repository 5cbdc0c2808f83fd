// The only code that reads or writes `serial_templates` and `serial_jobs`.
import type { Executor } from '../../platform/db/Database.js'
import type { SerialJobRow, SerialTemplateRow } from './tables.js'
import type { PageRequest } from '../../platform/paging.js'
import { paged, withinNodes } from '../../platform/db/keyset.js'

const OPEN = ['queued', 'sent']

export class SerialTemplateRepository {
  constructor(private readonly k: Executor) {}

  /** Templates of the workspace homed within `scopeIds` (null = all), oldest first. */
  list(workspaceId: string, scopeIds: string[] | null): Promise<SerialTemplateRow[]> {
    return withinNodes(this.k.selectFrom('serial_templates').selectAll().where('workspace_id', '=', workspaceId), 'node_id', scopeIds)
      .orderBy('id', 'asc')
      .execute()
  }

  byId(workspaceId: string, id: string): Promise<SerialTemplateRow | undefined> {
    return this.k.selectFrom('serial_templates').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  async insert(row: SerialTemplateRow): Promise<void> {
    await this.k.insertInto('serial_templates').values(row).execute()
  }

  async update(workspaceId: string, id: string, patch: Pick<SerialTemplateRow, 'name' | 'model' | 'node_id' | 'items' | 'updated_at'>): Promise<void> {
    await this.k.updateTable('serial_templates').set(patch).where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    await this.k.deleteFrom('serial_templates').where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
  }

  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    const r = await this.k
      .selectFrom('serial_templates')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('node_id', '=', nodeId)
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }
}

export class SerialJobRepository {
  constructor(private readonly k: Executor) {}

  /** A job with its screen's home node (jobs are reached through their screen). */
  withScreenNode(workspaceId: string, id: string): Promise<(SerialJobRow & { node_id: string | null }) | undefined> {
    return this.k
      .selectFrom('serial_jobs as j')
      .innerJoin('screens as s', 's.id', 'j.screen_id')
      .selectAll('j')
      .select('s.node_id as node_id')
      .where('j.id', '=', id)
      .where('j.workspace_id', '=', workspaceId)
      .executeTakeFirst()
  }

  byId(id: string): Promise<SerialJobRow | undefined> {
    return this.k.selectFrom('serial_jobs').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** For each of these screens and each of these byte strings (hex), when a job sending them last succeeded. */
  lastOkOf(
    workspaceId: string,
    screenIds: readonly string[],
    bytesHex: readonly string[],
  ): Promise<{ screen_id: string; bytes_hex: string; at: string | null }[]> {
    if (!screenIds.length || !bytesHex.length) return Promise.resolve([])
    return this.k
      .selectFrom('serial_jobs')
      .select(['screen_id', 'bytes_hex'])
      .select((eb) => eb.fn.max('completed_at').as('at'))
      .where('workspace_id', '=', workspaceId)
      .where('screen_id', 'in', screenIds)
      .where('bytes_hex', 'in', bytesHex)
      .where('status', '=', 'ok')
      .groupBy(['screen_id', 'bytes_hex'])
      .execute()
  }

  byIds(ids: string[]): Promise<SerialJobRow[]> {
    if (!ids.length) return Promise.resolve([])
    return this.k.selectFrom('serial_jobs').selectAll().where('id', 'in', ids).orderBy('id', 'asc').execute()
  }

  private ofScreen(workspaceId: string, screenId: string) {
    return this.k.selectFrom('serial_jobs').where('workspace_id', '=', workspaceId).where('screen_id', '=', screenId)
  }

  listForScreen(workspaceId: string, screenId: string, page: PageRequest): Promise<SerialJobRow[]> {
    return paged(this.ofScreen(workspaceId, screenId).selectAll(), page, 'desc').execute()
  }

  async countForScreen(workspaceId: string, screenId: string): Promise<number> {
    const r = await this.ofScreen(workspaceId, screenId)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** Open jobs (queued or sent) of a screen, oldest first. */
  /** Open jobs of a screen, oldest first; with `createdSince`, only those created at or after it (not past their TTL). */
  openFor(screenId: string, createdSince?: string): Promise<SerialJobRow[]> {
    let q = this.k.selectFrom('serial_jobs').selectAll().where('screen_id', '=', screenId).where('status', 'in', OPEN)
    if (createdSince !== undefined) q = q.where('created_at', '>=', createdSince)
    return q.orderBy('id', 'asc').execute()
  }

  /** Open jobs of several screens in one read per 500 screens, by screen, each list as openFor orders it. */
  async openForMany(screenIds: readonly string[], createdSince?: string): Promise<Map<string, SerialJobRow[]>> {
    const out = new Map<string, SerialJobRow[]>()
    for (let i = 0; i < screenIds.length; i += 500) {
      let q = this.k
        .selectFrom('serial_jobs')
        .selectAll()
        .where('screen_id', 'in', screenIds.slice(i, i + 500))
        .where('status', 'in', OPEN)
      if (createdSince !== undefined) q = q.where('created_at', '>=', createdSince)
      for (const r of await q.orderBy('id', 'asc').execute()) {
        const list = out.get(r.screen_id)
        if (list) list.push(r)
        else out.set(r.screen_id, [r])
      }
    }
    return out
  }

  async screensWithOpen(): Promise<string[]> {
    const rows = await this.k.selectFrom('serial_jobs').select('screen_id').distinct().where('status', 'in', OPEN).execute()
    return rows.map((r) => r.screen_id)
  }

  async insertMany(rows: SerialJobRow[], k: Executor = this.k): Promise<void> {
    if (rows.length) await k.insertInto('serial_jobs').values(rows).execute()
  }

  async markSent(jobId: string, at: string): Promise<void> {
    await this.k
      .updateTable('serial_jobs')
      .set((eb) => ({ status: 'sent', sent_at: eb.fn.coalesce('sent_at', eb.val(at)) }))
      .where('id', '=', jobId)
      .where('status', '=', 'queued')
      .execute()
  }

  /**
   * Completes the job in one statement when it belongs to `screenId` and is still open
   * (queued, sent, or failed only by expiry); false when nothing matched.
   */
  async completeOpen(
    jobId: string,
    screenId: string,
    r: { status: string; reply_hex: string; sent_hex: string; reason: string | null; at: string },
  ): Promise<boolean> {
    const res = await this.k
      .updateTable('serial_jobs')
      .set((eb) => ({
        status: r.status,
        reply_hex: r.reply_hex,
        sent_hex: r.sent_hex,
        reason: r.reason,
        completed_at: r.at,
        sent_at: eb.fn.coalesce('sent_at', eb.val(r.at)),
      }))
      .where('id', '=', jobId)
      .where('screen_id', '=', screenId)
      .where((w) => w.or([w('status', 'in', ['queued', 'sent']), w.and([w('status', '=', 'failed'), w('reason', '=', 'expired')])]))
      .executeTakeFirst()
    return Number(res.numUpdatedRows) === 1
  }

  /** Fails open jobs created before `cutoff`; returns how many. */
  async expireBefore(cutoff: string, now: string): Promise<number> {
    const r = await this.k
      .updateTable('serial_jobs')
      .set({ status: 'failed', reason: 'expired', completed_at: now })
      .where('status', 'in', OPEN)
      .where('created_at', '<', cutoff)
      .executeTakeFirst()
    return Number(r.numUpdatedRows)
  }
}
