// The only code that reads or writes `events_outbox`.
import type { Executor } from '../../platform/db/Database.js'
import type { Selectable } from 'kysely'
import type { EventsOutboxTable } from './tables.js'

export type OutboxRow = Selectable<EventsOutboxTable>

/** Rows per multi-row statement: 6 parameters each, well inside both engines' limits. */
const APPEND_CHUNK = 500

export class EventOutboxRepository {
  constructor(private readonly k: Executor) {}

  async append(row: Omit<OutboxRow, 'dispatched_at'>, k: Executor): Promise<void> {
    await k
      .insertInto('events_outbox')
      .values({ ...row, dispatched_at: null })
      .execute()
  }

  /** Appends several rows in one statement per chunk (a connect storm's `screen.online` events). */
  async appendMany(rows: readonly Omit<OutboxRow, 'dispatched_at'>[], k: Executor): Promise<void> {
    for (let i = 0; i < rows.length; i += APPEND_CHUNK) {
      await k
        .insertInto('events_outbox')
        .values(rows.slice(i, i + APPEND_CHUNK).map((r) => ({ ...r, dispatched_at: null })))
        .execute()
    }
  }

  /** How many events wait to be dispatched, and when the oldest of them occurred (null: none). */
  async backlog(): Promise<{ pending: number; oldest: string | null }> {
    const row = await this.k
      .selectFrom('events_outbox')
      .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min('occurred_at').as('oldest')])
      .where('dispatched_at', 'is', null)
      .executeTakeFirst()
    return { pending: Number(row?.n ?? 0), oldest: (row?.oldest as string | null | undefined) ?? null }
  }

  /** Events not yet dispatched, oldest first. */
  pending(limit: number): Promise<OutboxRow[]> {
    return this.k.selectFrom('events_outbox').selectAll().where('dispatched_at', 'is', null).orderBy('id', 'asc').limit(limit).execute()
  }

  /** Marks these dispatched where no other dispatcher got there first; resolves with the ids this call marked. */
  async markManyDispatched(ids: readonly string[], at: string, k: Executor): Promise<Set<string>> {
    const mine = new Set<string>()
    for (let i = 0; i < ids.length; i += APPEND_CHUNK) {
      const rows = await k
        .updateTable('events_outbox')
        .set({ dispatched_at: at })
        .where('id', 'in', ids.slice(i, i + APPEND_CHUNK))
        .where('dispatched_at', 'is', null)
        .returning('id')
        .execute()
      for (const r of rows) mine.add(r.id)
    }
    return mine
  }

  /** Events after `id` in id order (every workspace), at most `limit`: what live streams read. */
  after(id: string, limit: number): Promise<OutboxRow[]> {
    return this.k.selectFrom('events_outbox').selectAll().where('id', '>', id).orderBy('id', 'asc').limit(limit).execute()
  }

  /** A workspace's events after `id`, oldest first, at most `limit` (a stream's replay). */
  afterInWorkspace(workspaceId: string, id: string, limit: number): Promise<OutboxRow[]> {
    return this.k
      .selectFrom('events_outbox')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '>', id)
      .orderBy('id', 'asc')
      .limit(limit)
      .execute()
  }

  async exists(id: string): Promise<boolean> {
    return (await this.k.selectFrom('events_outbox').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
  }

  /** Drops dispatched events older than `cutoff`. */
  async purgeDispatchedBefore(cutoff: string): Promise<number> {
    const r = await this.k.deleteFrom('events_outbox').where('dispatched_at', 'is not', null).where('occurred_at', '<', cutoff).executeTakeFirst()
    return Number(r.numDeletedRows)
  }
}
