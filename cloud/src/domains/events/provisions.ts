// What the events domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { EventBus, EventOutbox, EventStreamHub } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    events: EventBus
    /** Domain events recorded with the change that causes them; see domains/events/EventOutbox.ts. */
    outbox: EventOutbox
    /** Live event streams (GET /v1/events/stream) reading the outbox. */
    eventStream: EventStreamHub
  }
}
