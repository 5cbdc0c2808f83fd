// The only code that reads or writes `screenshots` (screenshot jobs and their PNGs' hashes).
import type { Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import { announce } from '../../platform/db/changes.js'
import type { ScreenshotsTable } from './tables.js'

export type ScreenshotRow = Selectable<ScreenshotsTable>

const OPEN = ['queued', 'sent']

export class ScreenshotRepository {
  constructor(private readonly k: Executor) {}

  async insert(row: ScreenshotRow): Promise<void> {
    await this.k.insertInto('screenshots').values(row).execute()
  }

  byId(id: string): Promise<ScreenshotRow | undefined> {
    return this.k.selectFrom('screenshots').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** A screen's jobs without a result, oldest first. */
  /** Open jobs of the screen, oldest first; `createdSince`: only those created at or after it (the TTL cutoff). */
  openFor(screenId: string, createdSince?: string): Promise<ScreenshotRow[]> {
    let q = this.k.selectFrom('screenshots').selectAll().where('screen_id', '=', screenId).where('status', 'in', OPEN)
    if (createdSince !== undefined) q = q.where('created_at', '>=', createdSince)
    return q.orderBy('created_at').orderBy('id').execute()
  }

  /** Open jobs of several screens in one read per 500 screens, by screen, each list as openFor orders it. */
  async openForMany(screenIds: readonly string[], createdSince?: string): Promise<Map<string, ScreenshotRow[]>> {
    const out = new Map<string, ScreenshotRow[]>()
    for (let i = 0; i < screenIds.length; i += 500) {
      let q = this.k
        .selectFrom('screenshots')
        .selectAll()
        .where('screen_id', 'in', screenIds.slice(i, i + 500))
        .where('status', 'in', OPEN)
      if (createdSince !== undefined) q = q.where('created_at', '>=', createdSince)
      for (const r of await q.orderBy('created_at').orderBy('id').execute()) {
        const list = out.get(r.screen_id)
        if (list) list.push(r)
        else out.set(r.screen_id, [r])
      }
    }
    return out
  }

  async markSent(id: string, at: string): Promise<void> {
    await this.k.updateTable('screenshots').set({ status: 'sent', sent_at: at }).where('id', '=', id).where('status', '=', 'queued').execute()
  }

  /** Closes an open job; false when it was already closed (a late or repeated answer). */
  async complete(
    id: string,
    patch: Pick<ScreenshotRow, 'status' | 'reason' | 'completed_at'> & Partial<Pick<ScreenshotRow, 'sha256' | 'size_bytes' | 'width' | 'height' | 'source'>>,
  ): Promise<boolean> {
    const closed = await this.k.updateTable('screenshots').set(patch).where('id', '=', id).where('status', 'in', OPEN).returning('screen_id').execute()
    // A screenshot that came back is its screen's newest in the screen list (its kept pages are stale).
    if (patch.status === 'ok' && closed.length > 0) announce(this.k, { kind: 'screens', screenIds: closed.map((r) => r.screen_id) })
    return closed.length > 0
  }

  /** Fails open jobs created before `cutoff` with `reason`; returns how many. */
  async expireOpen(cutoff: string, reason: string, at: string): Promise<number> {
    const r = await this.k
      .updateTable('screenshots')
      .set({ status: 'failed', reason, completed_at: at })
      .where('status', 'in', OPEN)
      .where('created_at', '<', cutoff)
      .executeTakeFirst()
    return Number(r.numUpdatedRows)
  }

  /** Deletes rows created before `cutoff`; answers the hashes they held. */
  async deleteBefore(cutoff: string): Promise<string[]> {
    const rows = await this.k.selectFrom('screenshots').select(['sha256', 'screen_id', 'status']).where('created_at', '<', cutoff).execute()
    await this.k.deleteFrom('screenshots').where('created_at', '<', cutoff).execute()
    // The screens whose newest screenshot may have gone: the screen list shows another, or none.
    const screenIds = [...new Set(rows.filter((r) => r.status === 'ok').map((r) => r.screen_id))]
    if (screenIds.length > 0) announce(this.k, { kind: 'screens', screenIds })
    return [...new Set(rows.map((r) => r.sha256).filter((s): s is string => s !== null))]
  }
}
