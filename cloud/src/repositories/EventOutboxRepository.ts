// The only code that reads or writes `events_outbox`.
import type { Executor } from '../db/Database.js'
import type { Selectable } from 'kysely'
import type { EventsOutboxTable } from '../db/schema.js'

export type OutboxRow = Selectable<EventsOutboxTable>

export class EventOutboxRepository {
  constructor(private readonly k: Executor) {}

  async append(row: Omit<OutboxRow, 'dispatched_at'>, k: Executor): Promise<void> {
    await k
      .insertInto('events_outbox')
      .values({ ...row, dispatched_at: null })
      .execute()
  }

  /** Events not yet dispatched, oldest first. */
  pending(limit: number): Promise<OutboxRow[]> {
    return this.k.selectFrom('events_outbox').selectAll().where('dispatched_at', 'is', null).orderBy('id', 'asc').limit(limit).execute()
  }

  /** Marks one dispatched; false when another dispatcher got there first. */
  async markDispatched(id: string, at: string, k: Executor): Promise<boolean> {
    const r = await k.updateTable('events_outbox').set({ dispatched_at: at }).where('id', '=', id).where('dispatched_at', 'is', null).executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  /** Drops dispatched events older than `cutoff`. */
  async purgeDispatchedBefore(cutoff: string): Promise<number> {
    const r = await this.k.deleteFrom('events_outbox').where('dispatched_at', 'is not', null).where('occurred_at', '<', cutoff).executeTakeFirst()
    return Number(r.numDeletedRows)
  }
}
