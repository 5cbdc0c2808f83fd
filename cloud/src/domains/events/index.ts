// Domain events: the in-process bus and the outbox that records each event with the change
// that causes it (webhooks and alerts consume the outbox's batches).
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { EventBus } from './EventBus.js'
import { EventOutbox } from './EventOutbox.js'
export { EVENT_NAMES } from './EventBus.js'

export const eventsModule = defineModule<Pick<P, 'db' | 'clock' | 'ids' | 'log' | 'housekeeping'>, Pick<D, 'events' | 'outbox'>>({
  name: 'events',
  needs: { db: true, clock: true, ids: true, log: true, housekeeping: true },
  provides: { events: true, outbox: true },
  create: ({ db, clock, ids, log, housekeeping }) => {
    const events = new EventBus(log)
    const outbox = new EventOutbox(db, clock, ids, events, log)
    housekeeping.add({ name: 'dispatched events', run: () => outbox.purgeDispatched() })
    return { events, outbox }
  },
})
