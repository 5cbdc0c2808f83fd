// What other domains use of events: its public surface. The module that wires it is in module.ts.
export { EVENT_NAMES } from './EventBus.js'
export type { EventOutbox } from './EventOutbox.js'
export type { EventStreamHub } from './EventStream.js'
export type { EventData } from './payloads.js'
export type { DomainEvent, EventBus, EventName } from './EventBus.js'
