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
  needs: ['db', 'clock', 'ids', 'log', 'timers', 'config', 'housekeeping', 'stopSteps', 'redis', 'metrics'],
  provides: ['events', 'outbox', 'eventStream'],
  create: ({ db, clock, ids, log, timers, config, housekeeping, stopSteps, redis, metrics }) => {
    const events = new EventBus(log)
    const outbox = new EventOutbox(db, clock, ids, events, log)
    housekeeping.add({ name: 'dispatched events', run: () => outbox.purgeDispatched() })
    // One read for both gauges of a scrape (a scrape starts collecting every metric at once).
    let backlog: Promise<{ pending: number; lagSeconds: number }> | null = null
    const read = () => {
      backlog ??= outbox.backlog().finally(() => {
        backlog = null
      })
      return backlog
    }
    metrics.cloudGauge('svc_outbox_pending', 'Domain events recorded but not yet dispatched to webhooks and alerts.', async () => (await read()).pending)
    metrics.cloudGauge(
      'svc_outbox_lag_seconds',
      'How long the oldest event not yet dispatched has waited (0 when none waits).',
      async () => (await read()).lagSeconds,
    )
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
