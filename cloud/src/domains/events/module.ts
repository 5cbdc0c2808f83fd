// Domain events: the in-process bus and the outbox that records each event with the change
// that causes it (webhooks and alerts consume the outbox's batches).
import { domainModule } from '../provisions.js'
import { EventBus } from './EventBus.js'
import { EventOutbox } from './EventOutbox.js'

export const eventsModule = domainModule({
  name: 'events',
  needs: ['db', 'clock', 'ids', 'log', 'housekeeping'],
  provides: ['events', 'outbox'],
  create: ({ db, clock, ids, log, housekeeping }) => {
    const events = new EventBus(log)
    const outbox = new EventOutbox(db, clock, ids, events, log)
    housekeeping.add({ name: 'dispatched events', run: () => outbox.purgeDispatched() })
    return { events, outbox }
  },
})
