// What other domains use of webhooks: its public surface. The module that wires it is in module.ts.
export { signedHeaders, newSigningSecret } from './signing.js'
export { describeSendError } from './model.js'
export type { WebhookEndpoints } from './WebhookEndpoints.js'
export type { WebhookQueue } from './WebhookQueue.js'
export type { WebhookSender } from './WebhookSender.js'
export type { WebhookDeliveryWorker } from './WebhookDeliveryWorker.js'
