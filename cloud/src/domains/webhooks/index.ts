// Webhooks: endpoints, and the delivery of every domain event to them (signed, retried,
// exactly once per endpoint whichever instance dispatches).
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { WebhookDeliveryWorker } from './WebhookDeliveryWorker.js'
import { WebhookEndpoints } from './WebhookEndpoints.js'
import { WebhookQueue } from './WebhookQueue.js'
import { WebhookSender } from './WebhookSender.js'

export { default as webhookRoutes } from './webhookRoutes.js'

type Needs = Pick<P, 'db' | 'clock' | 'ids' | 'random' | 'config' | 'log' | 'outbound'> & Pick<D, 'mailer' | 'users' | 'outbox'>

export const webhooksModule = defineModule<Needs, Pick<D, 'webhookEndpoints' | 'webhookQueue' | 'webhookSender' | 'webhookWorker'>>({
  name: 'webhooks',
  needs: { db: true, clock: true, ids: true, random: true, config: true, log: true, outbound: true, mailer: true, users: true, outbox: true },
  provides: { webhookEndpoints: true, webhookQueue: true, webhookSender: true, webhookWorker: true },
  create: ({ db, clock, ids, random, config, log, outbound, mailer, users, outbox }) => {
    const webhookEndpoints = new WebhookEndpoints(db, clock, ids, outbound, random)
    const webhookQueue = new WebhookQueue(db, clock, ids, config.webhookLeaseMs)
    const webhookSender = new WebhookSender(db, clock, outbound, webhookQueue, webhookEndpoints, mailer, users, {
      timeoutMs: 10_000,
      log,
      endpointConcurrency: config.webhookEndpointConcurrency,
    })
    const webhookWorker = new WebhookDeliveryWorker(webhookQueue, webhookSender, clock, config.webhookIntervalMs, log, 200, () => outbox.dispatch(), {
      leaseMs: config.webhookLeaseMs,
    })
    // Every domain event's webhook deliveries are made in the dispatch transaction; the
    // worker starts at once instead of waiting for its interval.
    outbox.consume(async (tx, batch) => {
      if ((await webhookQueue.enqueueManyIn(tx, batch)).length) queueMicrotask(() => webhookWorker.kick())
    })
    return { webhookEndpoints, webhookQueue, webhookSender, webhookWorker }
  },
})
