// What webhook endpoints and deliveries are: the retry schedule and limits, the API's
// schemas and views, the rows as the queue and the sender pass them on.
import { Type, type Static } from '@sinclair/typebox'
import { ApiError } from '../../platform/errors.js'
import { isUnsafeUrlError } from '../../platform/net/OutboundGuard.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import type { Settlement } from './WebhookRepository.js'
import type { RowWith } from '../../platform/db/schema.js'
import type { WebhookDeliveriesTable, WebhookEndpointRow } from './tables.js'

/** Waits after failed attempt n (1-based): 30 s, 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, then 4 h. */
export const BACKOFF_MS = [30_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000] as const
export const MAX_ATTEMPTS = 9
export const AUTO_DISABLE_AFTER = 9
export const RETENTION_MS = 30 * 24 * 3600_000
export const DESCRIPTION_MAX = 200
/** Requests in flight to one endpoint origin at most (and connections open to it), unless the setting says otherwise. */
export const ENDPOINT_CONCURRENCY = 16
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'abandoned'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

export function backoffAfter(attempt: number): number {
  return BACKOFF_MS[Math.min(Math.max(attempt, 1), BACKOFF_MS.length) - 1]!
}

export type EndpointRow = WebhookEndpointRow

export type DeliveryRow = RowWith<WebhookDeliveriesTable, { status: DeliveryStatus }>

const EndpointFields = {
  id: Type.String(),
  url: Type.String(),
  description: Nullable(Type.String()),
  secretPreview: Type.String({ description: 'First 8 characters of the signing secret.' }),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  autoDisabledAt: Nullable(Timestamp),
  autoDisabledReason: Nullable(Type.String()),
  consecutiveFailures: Type.Integer(),
  lastDeliveryAt: Nullable(Timestamp),
  lastStatus: Nullable(Type.Integer()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}
/** An endpoint as the API answers it: the routes' response schema, and EndpointView is derived from it. */
export const WebhookEndpoint = Type.Object(EndpointFields)
export type EndpointView = Static<typeof WebhookEndpoint>
/** The create answer: the endpoint with its secret, shown only there. */
export const CreatedEndpoint = Type.Object({
  ...EndpointFields,
  secret: Type.String({ description: 'HMAC signing secret, 64 hex characters; shown only here.' }),
})

/** A delivery as the API answers it: the routes' response schema, and DeliveryView is derived from it. */
export const WebhookDelivery = Type.Object({
  id: Type.String(),
  endpointId: Type.String(),
  event: Type.String(),
  status: StringEnum(DELIVERY_STATUSES),
  attempts: Type.Integer(),
  occurredAt: Timestamp,
  createdAt: Timestamp,
  nextAttemptAt: Nullable(Timestamp),
  deliveredAt: Nullable(Timestamp),
  responseStatus: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  replayOf: Nullable(Type.String()),
  payload: Nullable(Type.Object({}, { additionalProperties: true })),
})
export type DeliveryView = Static<typeof WebhookDelivery>

/** One sent delivery, waiting for its write: the row's settlement and the endpoint bookkeeping. */
export interface Outcome {
  d: DeliveryRow
  /** The endpoint the delivery went to; null when it was abandoned unsent. */
  ep: EndpointRow | null
  at: string
  settle: Settlement
  result: SendResult
}

export interface SendResult {
  deliveryId: string
  ok: boolean
  status: number | null
  error: string | null
}

export const badRequest = (message: string) => new ApiError('bad_request', message)

export function parseJson<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback
  try {
    return JSON.parse(text) as T
  } catch {
    return fallback
  }
}

export function endpointView(r: EndpointRow): EndpointView {
  return {
    id: r.id,
    url: r.url,
    description: r.description,
    secretPreview: r.secret.slice(0, 8),
    events: parseJson<string[]>(r.events, []),
    enabled: r.enabled === 1,
    autoDisabledAt: r.auto_disabled_at,
    autoDisabledReason: r.auto_disabled_reason,
    consecutiveFailures: r.consecutive_failures,
    lastDeliveryAt: r.last_delivery_at,
    lastStatus: r.last_status,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }
}

export function deliveryView(r: DeliveryRow): DeliveryView {
  const payload = parseJson<unknown>(r.payload, null)
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    event: r.event,
    status: r.status,
    attempts: r.attempts,
    occurredAt: r.occurred_at,
    createdAt: r.created_at,
    nextAttemptAt: r.status === 'pending' || r.status === 'failed' ? r.next_attempt_at : null,
    deliveredAt: r.delivered_at,
    responseStatus: r.response_status,
    error: r.error,
    replayOf: r.replay_of,
    payload: payload && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Record<string, unknown>) : null,
  }
}

/** What went wrong with a send, in the words of the test/replay answer (`http 500`, a timeout, an unsafe address). */
export function describeSendError(e: unknown, timeoutMs: number): string {
  if (isUnsafeUrlError(e)) return `unsafe address: ${((e as { cause?: Error }).cause ?? (e as Error)).message}`
  const err = e as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } }
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError' || err?.code === 'UND_ERR_HEADERS_TIMEOUT' || err?.code === 'UND_ERR_BODY_TIMEOUT') {
    return `timeout: no answer within ${Math.round(timeoutMs / 1000)} s`
  }
  const code = err?.code ?? err?.cause?.code
  return `connection failed: ${code ? `${code} ` : ''}${err?.message ?? String(e)}`.slice(0, 300)
}

export function cutDescription(d: string | null | undefined): string | null {
  if (d === undefined || d === null) return null
  const t = d.trim()
  return t ? [...t].slice(0, DESCRIPTION_MAX).join('') : null
}
