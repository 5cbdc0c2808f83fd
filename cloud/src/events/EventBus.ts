// The internal event bus: the event outbox (events/EventOutbox.ts) publishes each event
// here once its dispatch has committed (the webhook deliveries are rows by then); screen
// presence listens for screen.online/offline (alert evaluation). Listeners are awaited in
// order; a failing listener is logged and does not stop the others or the publisher.

export const EVENT_NAMES = [
  'screen.offline',
  'screen.online',
  'content.recalled',
  'content.restored',
  'approval.requested',
  'approval.decided',
  'emergency.started',
  'emergency.cleared',
] as const
export type EventName = (typeof EVENT_NAMES)[number]

export interface DomainEvent<D = Record<string, unknown>> {
  event: EventName
  workspaceId: string
  occurredAt: string
  data: D
}

export type EventListener = (e: DomainEvent) => Promise<void> | void

export class EventBus {
  private readonly listeners: EventListener[] = []

  constructor(private readonly log: { error(obj: unknown, msg: string): void }) {}

  subscribe(listener: EventListener): () => void {
    this.listeners.push(listener)
    return () => {
      const i = this.listeners.indexOf(listener)
      if (i >= 0) this.listeners.splice(i, 1)
    }
  }

  async publish(e: DomainEvent): Promise<void> {
    for (const l of [...this.listeners]) {
      try {
        await l(e)
      } catch (err) {
        this.log.error({ err, event: e.event }, 'event listener failed')
      }
    }
  }
}
