// Webhooks: endpoints, and the delivery of every domain event to them (signed, retried,
// exactly once per endpoint whichever instance dispatches).
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { WebhookDeliveryWorker } from './WebhookDeliveryWorker.js'
import { WebhookService } from './WebhookService.js'

export { default as webhookRoutes } from './webhookRoutes.js'

type Needs = Pick<P, 'db' | 'clock' | 'ids' | 'random' | 'config' | 'log' | 'outbound'> & Pick<D, 'mailer' | 'users' | 'outbox'>

export const webhooksModule = defineModule<Needs, Pick<D, 'webhooks' | 'webhookWorker'>>({
  name: 'webhooks',
  needs: { db: true, clock: true, ids: true, random: true, config: true, log: true, outbound: true, mailer: true, users: true, outbox: true },
  provides: { webhooks: true, webhookWorker: true },
  create: ({ db, clock, ids, random, config, log, outbound, mailer, users, outbox }) => {
    const webhooks = new WebhookService(db, clock, ids, outbound, mailer, users, {
      leaseMs: config.webhookLeaseMs,
      timeoutMs: 10_000,
      random,
      log,
      endpointConcurrency: config.webhookEndpointConcurrency,
    })
    const webhookWorker = new WebhookDeliveryWorker(webhooks, clock, config.webhookIntervalMs, log, 200, () => outbox.dispatch(), {
      leaseMs: config.webhookLeaseMs,
    })
    // Every domain event's webhook deliveries are made in the dispatch transaction; the
    // worker starts at once instead of waiting for its interval.
    outbox.consume(async (tx, batch) => {
      if ((await webhooks.enqueueManyIn(tx, batch)).length) queueMicrotask(() => webhookWorker.kick())
    })
    return { webhooks, webhookWorker }
  },
})
