// The internal event bus: the event outbox (domains/events/EventOutbox.ts) publishes each event
// here once its dispatch has committed (the webhook deliveries are rows by then); screen
// presence listens for screen.online/offline (alert evaluation). Listeners are awaited in
// order; a failing listener is logged and does not stop the others or the publisher.
// A batch listener hears a dispatch run's events at once, in order (alert evaluation reads
// and writes a connect storm's screens a batch at a time, not one at a time).

import type { EventData } from './payloads.js'

export const EVENT_NAMES = [
  'screen.offline',
  'screen.online',
  'screen.drifting',
  'screen.in_sync',
  'screen.panel_mismatch',
  'screen.reported',
  'content.recalled',
  'content.restored',
  'approval.requested',
  'approval.decided',
  'emergency.started',
  'emergency.cleared',
  'emergency.reach',
] as const
export type EventName = (typeof EVENT_NAMES)[number]

/** One event as the catalogue types it: its name decides the shape of its `data`. */
export type EventOf<E extends EventName> = {
  event: E
  workspaceId: string
  occurredAt: string
  data: EventData[E]
}

/** Any event of the catalogue (a union discriminated by `event`). */
export type DomainEvent = { [E in EventName]: EventOf<E> }[EventName]

export type EventListener = (e: DomainEvent) => Promise<void> | void
export type EventBatchListener = (events: DomainEvent[]) => Promise<void> | void

export class EventBus {
  private readonly listeners: EventListener[] = []
  private readonly batchListeners: EventBatchListener[] = []

  constructor(private readonly log: { error(obj: unknown, msg: string): void }) {}

  subscribe(listener: EventListener): () => void {
    this.listeners.push(listener)
    return () => {
      const i = this.listeners.indexOf(listener)
      if (i >= 0) this.listeners.splice(i, 1)
    }
  }

  /** Hears the events of each `publishMany` at once (a single `publish` as a batch of one). */
  subscribeBatch(listener: EventBatchListener): () => void {
    this.batchListeners.push(listener)
    return () => {
      const i = this.batchListeners.indexOf(listener)
      if (i >= 0) this.batchListeners.splice(i, 1)
    }
  }

  async publish(e: DomainEvent): Promise<void> {
    await this.publishMany([e])
  }

  /** Each event to the listeners in order, then the whole run to the batch listeners. */
  async publishMany(events: DomainEvent[]): Promise<void> {
    if (!events.length) return
    for (const e of events)
      for (const l of [...this.listeners]) {
        try {
          await l(e)
        } catch (err) {
          this.log.error({ err, event: e.event }, 'event listener failed')
        }
      }
    for (const l of [...this.batchListeners]) {
      try {
        await l(events)
      } catch (err) {
        this.log.error({ err, events: events.length }, 'event batch listener failed')
      }
    }
  }
}
