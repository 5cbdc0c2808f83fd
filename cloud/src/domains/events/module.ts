// Domain events: the in-process bus and the outbox that records each event with the change
// that causes it (webhooks and alerts consume the outbox's batches).
import { domainModule } from '../../platform/provisions.js'
import { EventBus } from './EventBus.js'
import { EventOutbox } from './EventOutbox.js'
import { EventStreamHub } from './EventStream.js'
import { systemTimers } from '@svc/shared'

export { default as eventStreamRoutes } from './eventStreamRoutes.js'

export const eventsModule = domainModule({
  name: 'events',
  needs: ['db', 'clock', 'ids', 'log', 'timers', 'config', 'housekeeping', 'stopSteps', 'redis'],
  provides: ['events', 'outbox', 'eventStream'],
  create: ({ db, clock, ids, log, timers, config, housekeeping, stopSteps, redis }) => {
    const events = new EventBus(log)
    const outbox = new EventOutbox(db, clock, ids, events, log)
    housekeeping.add({ name: 'dispatched events', run: () => outbox.purgeDispatched() })
    // Live streams read the outbox; this process's dispatches wake them at once.
    const eventStream = new EventStreamHub(db.kysely, clock, timers ?? systemTimers, log, {
      maxPerWorkspace: config.eventStreamsPerWorkspace,
      maxPerCredential: config.eventStreamsPerCredential,
      // Instances joined through Redis count the places together.
      redis,
    })
    events.subscribeBatch(() => eventStream.wake())
    stopSteps.add('event streams', () => eventStream.close())
    return { events, outbox, eventStream }
  },
})
