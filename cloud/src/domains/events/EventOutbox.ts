// The outbox for domain events. A service records the event with `record(tx, e)` (or
// several with `recordMany`) inside the transaction of the change that causes it, so the
// change and its event commit together or not at all. `dispatch()` then hands the recorded
// events on, oldest first, a batch at a time: in one transaction it marks the batch
// dispatched and runs the transactional consumers on it (webhook deliveries are inserted
// there, so each event makes its deliveries exactly once, even with several processes
// dispatching); after that commit each event goes, in order, to the in-process EventBus
// (alert inputs and other listeners).
// Dispatch runs right after the change commits and again on every webhook worker run,
// so an event recorded by a process killed before it dispatched is sent by the next run.
// An event that is no change's (nothing else to commit with it) goes through `publish(e)`:
// the events published in one turn of the event loop, and those published while a batch is
// being written, are recorded together in one transaction (group commit), then dispatched.
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database, Queryable } from '../../platform/db/Database.js'
import { EventOutboxRepository } from './EventOutboxRepository.js'
import type { DomainEvent, EventBus } from './EventBus.js'

/**
 * Runs in the dispatch transaction with a batch of events, oldest first, and each event's
 * `data` as the outbox stores it (JSON text), so a consumer storing it again need not
 * serialise it again.
 */
export type OutboxConsumer = (tx: Queryable, events: readonly DomainEvent[], storedData: readonly string[]) => Promise<unknown>

/** Events per dispatch transaction. */
const DISPATCH_BATCH = 500
/** Events per group-commit transaction of publish(). */
const PUBLISH_BATCH = 500

interface Published {
  e: DomainEvent
  resolve: () => void
  reject: (err: unknown) => void
}
/** How long a dispatched event is kept (its webhook deliveries have their own log). */
export const DISPATCHED_RETENTION_MS = 7 * 86_400_000

export class EventOutbox {
  private readonly repo: EventOutboxRepository
  private readonly consumers: OutboxConsumer[] = []
  private running: Promise<number> | null = null
  private again = false

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    /** Where dispatched events are published. */
    readonly bus: EventBus,
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
    await this.repo.append(this.row(e), tx.kysely)
  }

  /** Records several events in the caller's transaction, in this order, in as few statements as the engine allows. */
  async recordMany(tx: Queryable, events: readonly DomainEvent[]): Promise<void> {
    if (events.length)
      await this.repo.appendMany(
        events.map((e) => this.row(e)),
        tx.kysely,
      )
  }

  private readonly published: Published[] = []
  private publishing = false
  private publishScheduled = false

  /**
   * Records `e` on its own (an event that is no change's) and dispatches it: resolves once
   * it is recorded, so it survives a crash from then on; the dispatch runs behind. The
   * events published in one turn of the event loop, and those published while a batch is
   * written, are recorded in one transaction.
   */
  publish(e: DomainEvent): Promise<void> {
    return new Promise((resolve, reject) => {
      this.published.push({ e, resolve, reject })
      if (!this.publishing && !this.publishScheduled) {
        this.publishScheduled = true
        setImmediate(() => {
          this.publishScheduled = false
          void this.writePublished()
        })
      }
    })
  }

  private async writePublished(): Promise<void> {
    if (this.publishing) return
    this.publishing = true
    try {
      while (this.published.length) {
        const batch = this.published.splice(0, PUBLISH_BATCH)
        try {
          // Ids made inside the transaction (the writer's turn): id order stays write order.
          await this.db.transaction((tx) =>
            this.recordMany(
              tx,
              batch.map((p) => p.e),
            ),
          )
          for (const p of batch) p.resolve()
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err)
          else {
            // One event the database refuses must not take the others with it: each alone.
            for (const p of batch) await this.db.transaction((tx) => this.record(tx, p.e)).then(p.resolve, p.reject)
          }
        }
        this.dispatch().catch((err) => this.log.error({ err }, 'outbox dispatch failed'))
      }
    } finally {
      this.publishing = false
    }
  }

  private row(e: DomainEvent) {
    return { id: this.ids.next('event'), workspace_id: e.workspaceId, event: e.event, data: JSON.stringify(e.data ?? {}), occurred_at: e.occurredAt }
  }

  /** How many events wait to be dispatched, and how long the oldest of them has waited (seconds; 0 when none). */
  async backlog(): Promise<{ pending: number; lagSeconds: number }> {
    const { pending, oldest } = await this.repo.backlog()
    const lagMs = oldest ? this.clock.now().getTime() - Date.parse(oldest) : 0
    return { pending, lagSeconds: Math.max(0, lagMs) / 1000 }
  }

  /** Drops dispatched events older than DISPATCHED_RETENTION_MS (the housekeeper); pending ones stay. */
  purgeDispatched(): Promise<number> {
    return this.repo.purgeDispatchedBefore(new Date(this.clock.now().getTime() - DISPATCHED_RETENTION_MS).toISOString())
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
      const rows = await this.repo.pending(DISPATCH_BATCH)
      if (!rows.length) return n
      const mine = await this.db.transaction(async (tx) => {
        const marked = await this.repo.markManyDispatched(
          rows.map((r) => r.id),
          this.clock.now().toISOString(),
          tx.kysely,
        )
        const events: DomainEvent[] = []
        const stored: string[] = []
        for (const row of rows) {
          if (!marked.has(row.id)) continue
          // Stored by record() from a typed event: read back as the same shape.
          events.push({ event: row.event, workspaceId: row.workspace_id, occurredAt: row.occurred_at, data: JSON.parse(row.data) } as DomainEvent)
          stored.push(row.data)
        }
        if (events.length) for (const c of this.consumers) await c(tx, events, stored)
        return events
      })
      n += mine.length
      await this.bus.publishMany(mine).catch((err) => this.log.error({ err, events: mine.length }, 'outbox publish failed'))
      if (rows.length < DISPATCH_BATCH) return n
    }
  }
}
