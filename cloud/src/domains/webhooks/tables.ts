// The webhooks domain's tables, as the migrations (platform/db/migrations) leave them: their
// column types, added to the database's type (`DB` in platform/db/schema.ts) by declaration
// merging, so every query is checked against them while the platform names no domain.
import type { Insertable, Selectable, Updateable } from 'kysely'
import type { Defaulted } from '../../platform/db/schema.js'

export interface WebhookEndpointsTable {
  id: string
  workspace_id: string
  url: string
  description: string | null
  secret: string
  /** JSON array of event names. */
  events: string
  enabled: Defaulted<number>
  auto_disabled_at: string | null
  auto_disabled_reason: string | null
  consecutive_failures: Defaulted<number>
  last_delivery_at: string | null
  last_status: number | null
  created_at: string
  updated_at: string
}

export interface WebhookDeliveriesTable {
  id: string
  workspace_id: string
  endpoint_id: string
  event: string
  status: string
  attempts: Defaulted<number>
  occurred_at: string
  created_at: string
  next_attempt_at: string | null
  claimed_until: string | null
  claim_token: string | null
  delivered_at: string | null
  response_status: number | null
  error: string | null
  replay_of: string | null
  data: string
  payload: string | null
}

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>
export type NewWebhookDelivery = Insertable<WebhookDeliveriesTable>
export type WebhookEndpointUpdate = Updateable<WebhookEndpointsTable>

declare module '../../platform/db/schema.js' {
  interface DB {
    webhook_endpoints: WebhookEndpointsTable
    webhook_deliveries: WebhookDeliveriesTable
  }
}
