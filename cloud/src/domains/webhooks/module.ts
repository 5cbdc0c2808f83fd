// Webhooks: endpoints, and the delivery of every domain event to them (signed, retried,
// exactly once per endpoint whichever instance dispatches).
import { domainModule } from '../../platform/provisions.js'
import { WebhookDeliveryWorker } from './WebhookDeliveryWorker.js'
import { WebhookEndpoints } from './WebhookEndpoints.js'
import { WebhookQueue } from './WebhookQueue.js'
import { WebhookSender } from './WebhookSender.js'

export { default as webhookRoutes } from './webhookRoutes.js'

export const webhooksModule = domainModule({
  name: 'webhooks',
  needs: ['db', 'clock', 'ids', 'random', 'config', 'log', 'outbound', 'running', 'metrics', 'mailer', 'users', 'outbox'],
  provides: ['webhookEndpoints', 'webhookQueue', 'webhookSender', 'webhookWorker'],
  create: ({ db, clock, ids, random, config, log, outbound, running, metrics, mailer, users, outbox }) => {
    const webhookEndpoints = new WebhookEndpoints(db, clock, ids, outbound, random)
    const webhookQueue = new WebhookQueue(db, clock, ids, config.webhookLeaseMs)
    const webhookSender = new WebhookSender(db, clock, outbound, webhookQueue, webhookEndpoints, mailer, users, {
      timeoutMs: 10_000,
      log,
      endpointConcurrency: config.webhookEndpointConcurrency,
    })
    metrics.counter(
      'svc_webhook_deliveries_total',
      'Webhook delivery attempts settled by this instance, by outcome (delivered; failed: retried later; abandoned).',
      () => Object.entries(webhookSender.outcomes).map(([outcome, n]) => [{ outcome }, n] as const),
      ['outcome'],
    )
    const webhookWorker = new WebhookDeliveryWorker(webhookQueue, webhookSender, clock, config.webhookIntervalMs, log, 200, () => outbox.dispatch(), {
      leaseMs: config.webhookLeaseMs,
    })
    // Every domain event's webhook deliveries are made in the dispatch transaction; the
    // worker starts at once instead of waiting for its interval.
    outbox.consume(async (tx, batch, storedData) => {
      if ((await webhookQueue.enqueueManyIn(tx, batch, storedData)).length) queueMicrotask(() => webhookWorker.kick())
    })
    // Delivery claims its rows, so it runs on every instance.
    running.add('webhook delivery', webhookWorker)
    return { webhookEndpoints, webhookQueue, webhookSender, webhookWorker }
  },
})
