// The outbox for domain events. A service records the event with `record(tx, e)` inside
// the transaction of the change that causes it, so the change and its event commit
// together or not at all. `dispatch()` then hands each recorded event on, oldest first:
// in one transaction it marks the row dispatched and runs the transactional consumers
// (webhook deliveries are inserted there, so each event makes its deliveries exactly
// once, even with several processes dispatching); after that commit the event goes to the
// in-process EventBus (alert inputs and other listeners) marked `viaOutbox`.
// Dispatch runs right after the change commits and again on every webhook worker run,
// so an event recorded by a process killed before it dispatched is sent by the next run.
import type { Clock, IdGenerator } from '../clock.js'
import type { Database, Queryable } from '../db/Database.js'
import { EventOutboxRepository } from '../repositories/EventOutboxRepository.js'
import type { DomainEvent, EventBus } from './EventBus.js'

export type OutboxConsumer = (tx: Queryable, e: DomainEvent) => Promise<unknown>

export class EventOutbox {
  private readonly repo: EventOutboxRepository
  private readonly consumers: OutboxConsumer[] = []
  private running: Promise<number> | null = null
  private again = false

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly bus: EventBus,
    private readonly log: { error(obj: unknown, msg: string): void },
  ) {
    this.repo = new EventOutboxRepository(db.kysely)
  }

  /** A consumer that runs inside the dispatch transaction (it must only write through `tx`). */
  consume(fn: OutboxConsumer): void {
    this.consumers.push(fn)
  }

  /** Records `e` in the caller's transaction. */
  async record(tx: Queryable, e: DomainEvent): Promise<void> {
    await this.repo.append(
      { id: this.ids.next('event'), workspace_id: e.workspaceId, event: e.event, data: JSON.stringify(e.data ?? {}), occurred_at: e.occurredAt },
      tx.kysely,
    )
  }

  /** Dispatches every pending event; concurrent calls in one process share one run. Returns how many this run dispatched. */
  dispatch(): Promise<number> {
    if (this.running) {
      this.again = true
      return this.running
    }
    this.running = (async () => {
      let n = 0
      do {
        this.again = false
        n += await this.runOnce()
      } while (this.again)
      return n
    })().finally(() => (this.running = null))
    return this.running
  }

  private async runOnce(): Promise<number> {
    let n = 0
    for (;;) {
      const rows = await this.repo.pending(100)
      for (const row of rows) {
        const e: DomainEvent = {
          event: row.event as DomainEvent['event'],
          workspaceId: row.workspace_id,
          occurredAt: row.occurred_at,
          data: JSON.parse(row.data) as Record<string, unknown>,
        }
        const mine = await this.db.transaction(async (tx) => {
          if (!(await this.repo.markDispatched(row.id, this.clock.now().toISOString(), tx.kysely))) return false
          for (const c of this.consumers) await c(tx, e)
          return true
        })
        if (!mine) continue
        n++
        await this.bus.publish({ ...e, viaOutbox: true }).catch((err) => this.log.error({ err, event: e.event }, 'outbox publish failed'))
      }
      if (rows.length < 100) return n
    }
  }
}
