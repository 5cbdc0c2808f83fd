// What the webhooks domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { WebhookDeliveryWorker, WebhookEndpoints, WebhookQueue, WebhookSender } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Webhook endpoints: where a workspace's events go. */
    webhookEndpoints: WebhookEndpoints
    /** The delivery queue and its log. */
    webhookQueue: WebhookQueue
    /** Sends deliveries (signed, pooled per endpoint), records outcomes, switches off failing endpoints. */
    webhookSender: WebhookSender
    webhookWorker: WebhookDeliveryWorker
  }
}
