// Webhook endpoints and their delivery log. Deliveries are a durable queue in the
// database: an event inserts one `pending` row per subscribed, enabled endpoint (so the
// work survives a crash once EventBus.publish resolves); WebhookDeliveryWorker claims due
// rows under a lease (`claimed_until`, `claim_token`) and calls attempt(). A row claimed
// by a process that died is claimed again once its lease runs out: delivery is at least
// once, and receivers de-duplicate on `deliveryId`.
import { randomUUID } from 'node:crypto'
import { Type, type Static } from '@sinclair/typebox'
import type { Clock, IdGenerator, RandomSource } from '../../platform/clock.js'
import type { Database, Queryable } from '../../platform/db/Database.js'
import type { Agent } from 'undici'
import { ApiError, notFound } from '../../platform/errors.js'
import type { DomainEvent, EventName } from '../events/EventBus.js'
import { isUnsafeUrlError, type OutboundGuard } from '../../platform/net/OutboundGuard.js'
import type { Principal } from '../../platform/http/Principal.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import { WebhookRepository, type Settlement } from './WebhookRepository.js'
import type { NewWebhookDelivery, RowWith, WebhookDeliveriesTable, WebhookEndpointRow } from '../../platform/db/schema.js'
import type { Mailer } from '../mail/Mailer.js'
import type { UserService } from '../access/UserService.js'
import { isEventName } from './catalog.js'
import { newSigningSecret, signedHeaders } from './signing.js'

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

const badRequest = (message: string) => new ApiError('bad_request', message)

function parseJson<T>(text: string | null, fallback: T): T {
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

export class WebhookService {
  private readonly repo: WebhookRepository
  /** Keep-alive connections per endpoint origin, through the guard's connect-time checks. */
  private readonly pool: Agent
  /** Requests in flight (and keep-alive connections) per endpoint origin at most. */
  readonly endpointConcurrency: number
  private readonly slots = new Map<string, { active: number; waiting: (() => void)[] }>()
  /** Endpoint URL → its origin (the slot key), so a delivery does not parse its URL again. */
  private readonly origins = new Map<string, string | null>()

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly outbound: OutboundGuard,
    private readonly mailer: Mailer,
    private readonly users: UserService,
    private readonly opts: {
      leaseMs: number
      timeoutMs: number
      random?: RandomSource
      log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void }
      /** Requests in flight (and connections) per endpoint origin at most; ENDPOINT_CONCURRENCY by default. */
      endpointConcurrency?: number
    },
  ) {
    this.repo = new WebhookRepository(db.kysely, db.dialect)
    this.endpointConcurrency = Math.max(1, Math.floor(opts.endpointConcurrency ?? ENDPOINT_CONCURRENCY))
    this.pool = outbound.pool(this.endpointConcurrency)
  }

  // ---- endpoints ----

  private checkUrl(raw: string): string {
    try {
      return this.outbound.check(raw.trim()).toString()
    } catch (e) {
      if (isUnsafeUrlError(e)) throw new ApiError('unsafe_url', `url is not a public https address: ${(e as Error).message}.`)
      throw e
    }
  }

  private checkEvents(events: string[]): EventName[] {
    const unknown = events.filter((e) => !isEventName(e))
    if (unknown.length) throw badRequest(`Unknown event ${JSON.stringify(unknown[0])}; see GET /v1/webhooks/events.`)
    return [...new Set(events)] as EventName[]
  }

  private async row(p: Principal, id: string): Promise<EndpointRow> {
    const r = (await this.repo.endpoint(p.workspaceId, id)) as EndpointRow | undefined
    if (!r) throw notFound('No such webhook endpoint.')
    return r
  }

  async list(p: Principal): Promise<EndpointView[]> {
    return ((await this.repo.endpoints(p.workspaceId)) as EndpointRow[]).map(endpointView)
  }

  async get(p: Principal, id: string): Promise<EndpointView> {
    return endpointView(await this.row(p, id))
  }

  async create(p: Principal, input: { url: string; events?: string[]; description?: string | null }): Promise<EndpointView & { secret: string }> {
    const url = this.checkUrl(input.url)
    const events = this.checkEvents(input.events ?? [])
    const secret = newSigningSecret(this.opts.random)
    const id = this.ids.next('webhookEndpoint')
    const now = this.clock.now().toISOString()
    await this.repo.insertEndpoint({
      id,
      workspace_id: p.workspaceId,
      url,
      description: cutDescription(input.description),
      secret,
      events: JSON.stringify(events),
      enabled: 1,
      auto_disabled_at: null,
      auto_disabled_reason: null,
      consecutive_failures: 0,
      last_delivery_at: null,
      last_status: null,
      created_at: now,
      updated_at: now,
    })
    return { ...(await this.get(p, id)), secret }
  }

  async update(p: Principal, id: string, input: { url?: string; events?: string[]; description?: string | null; enabled?: boolean }): Promise<EndpointView> {
    const cur = await this.row(p, id)
    const url = input.url !== undefined ? this.checkUrl(input.url) : cur.url
    const events = input.events !== undefined ? JSON.stringify(this.checkEvents(input.events)) : cur.events
    const description = input.description !== undefined ? cutDescription(input.description) : cur.description
    let { enabled, auto_disabled_at, auto_disabled_reason, consecutive_failures } = cur
    if (input.enabled === true) {
      // Switching on clears an automatic switch-off and starts the failure count again.
      enabled = 1
      auto_disabled_at = null
      auto_disabled_reason = null
      consecutive_failures = 0
    } else if (input.enabled === false) {
      enabled = 0
    }
    await this.repo.updateEndpoint(p.workspaceId, id, {
      url,
      events,
      description,
      enabled,
      auto_disabled_at,
      auto_disabled_reason,
      consecutive_failures,
      updated_at: this.clock.now().toISOString(),
    })
    return this.get(p, id)
  }

  async remove(p: Principal, id: string): Promise<{ id: string }> {
    await this.row(p, id)
    // Pending work for a deleted endpoint is dropped, not retried; the log keeps it.
    await this.db.transaction((tx) => this.repo.deleteEndpoint(p.workspaceId, id, tx.kysely))
    return { id }
  }

  // ---- the queue ----

  private bodyOf(d: Pick<DeliveryRow, 'id' | 'event' | 'occurred_at' | 'workspace_id' | 'data' | 'replay_of'>, attempt: number): string {
    return JSON.stringify({
      deliveryId: d.id,
      event: d.event,
      occurredAt: d.occurred_at,
      workspaceId: d.workspace_id,
      attempt,
      data: parseJson<unknown>(d.data, {}),
      ...(d.replay_of ? { replayOf: d.replay_of } : {}),
    })
  }

  private async insertDelivery(
    q: Queryable,
    ep: EndpointRow,
    e: { event: string; occurredAt: string; data: unknown },
    extra: { replayOf?: string | null; status?: DeliveryStatus; error?: string | null; claimToken?: string } = {},
  ): Promise<string> {
    const row = this.deliveryRow(ep, e, extra)
    await this.repo.insertDelivery(row, q.kysely)
    return row.id
  }

  /** The row of a new delivery of `e` to `ep`. */
  private deliveryRow(
    ep: EndpointRow,
    e: { event: string; occurredAt: string; data: unknown },
    extra: { replayOf?: string | null; status?: DeliveryStatus; error?: string | null; claimToken?: string } = {},
  ): NewWebhookDelivery & { id: string } {
    const id = this.ids.next('webhookDelivery')
    const nowDate = this.clock.now()
    const now = nowDate.toISOString()
    const status = extra.status ?? 'pending'
    const row = {
      id,
      event: e.event,
      occurred_at: e.occurredAt,
      workspace_id: ep.workspace_id,
      data: JSON.stringify(e.data ?? {}),
      replay_of: extra.replayOf ?? null,
    }
    return {
      id,
      workspace_id: ep.workspace_id,
      endpoint_id: ep.id,
      event: e.event,
      status,
      attempts: 0,
      occurred_at: e.occurredAt,
      created_at: now,
      next_attempt_at: status === 'pending' ? now : null,
      error: extra.error ?? null,
      replay_of: row.replay_of,
      data: row.data,
      payload: this.bodyOf(row, 1),
      // A test or replay is inserted already claimed, so the worker cannot take it first.
      claim_token: extra.claimToken ?? null,
      claimed_until: extra.claimToken ? new Date(nowDate.getTime() + this.opts.leaseMs).toISOString() : null,
    }
  }

  /**
   * A batch of events inside the caller's transaction (the event outbox's dispatch): each
   * workspace's enabled endpoints read once for the batch, the deliveries inserted together,
   * in event order. The caller kicks the worker after commit.
   */
  async enqueueManyIn(tx: Queryable, events: readonly DomainEvent[]): Promise<string[]> {
    const workspaces = [...new Set(events.map((e) => e.workspaceId))]
    const byWorkspace = new Map<string, { ep: EndpointRow; events: string[] }[]>()
    for (const ep of (await this.repo.enabledEndpointsOf(workspaces, tx.kysely)) as EndpointRow[]) {
      const list = byWorkspace.get(ep.workspace_id) ?? []
      list.push({ ep, events: parseJson<string[]>(ep.events, []) })
      byWorkspace.set(ep.workspace_id, list)
    }
    const rows: (NewWebhookDelivery & { id: string })[] = []
    for (const e of events)
      for (const { ep, events: subscribed } of byWorkspace.get(e.workspaceId) ?? []) if (subscribed.includes(e.event)) rows.push(this.deliveryRow(ep, e))
    await this.repo.insertDeliveries(rows, tx.kysely)
    return rows.map((r) => r.id)
  }

  /** Claims up to `limit` due deliveries under a lease; another process skips them until it ends. */
  async claimDue(limit: number, skipEndpoints: readonly string[] = []): Promise<DeliveryRow[]> {
    const now = this.clock.now()
    const iso = now.toISOString()
    const token = randomUUID()
    return (await this.repo.claimDue(iso, new Date(now.getTime() + this.opts.leaseMs).toISOString(), token, limit, skipEndpoints)) as DeliveryRow[]
  }

  /** Extends the lease of the deliveries still held under `tokens` by another lease length from now. */
  async renewLeases(tokens: readonly string[]): Promise<void> {
    await this.repo.renewLeases(tokens, new Date(this.clock.now().getTime() + this.opts.leaseMs).toISOString())
  }

  /** The endpoints of claimed deliveries, in one read. */
  async endpointsOf(ds: readonly DeliveryRow[]): Promise<Map<string, EndpointRow>> {
    const rows = (await this.repo.endpointsByIds([...new Set(ds.map((d) => d.endpoint_id))])) as EndpointRow[]
    return new Map(rows.map((e) => [e.id, e]))
  }

  /** One attempt of a claimed delivery: sign, POST through the guard, record the outcome. */
  async attempt(d: DeliveryRow): Promise<SendResult> {
    return (await this.attemptMany([d]))[0]!
  }

  /**
   * One attempt of each claimed delivery: the batch's endpoints read once, each body signed
   * once and POSTed through the guard's keep-alive pool (at most `endpointConcurrency` at a
   * time per endpoint), then every outcome written in one transaction (one commit for the batch).
   */
  async attemptMany(ds: DeliveryRow[]): Promise<SendResult[]> {
    if (!ds.length) return []
    const eps = await this.endpointsOf(ds)
    const done: Outcome[] = []
    await Promise.all(ds.map((d) => this.send(d, eps.get(d.endpoint_id)).then((o) => done.push(o))))
    await this.record(done)
    const byId = new Map(done.map((o) => [o.d.id, o.result]))
    return ds.map((d) => byId.get(d.id)!)
  }

  /**
   * Writes sent deliveries' outcomes in one transaction: every row in one statement (a
   * lost claim is another run's and changes nothing), then per endpoint, in the order the
   * answers came, its failure count and last status; mails the Owners of an endpoint this
   * switched off.
   */
  async record(done: readonly Outcome[]): Promise<void> {
    if (!done.length) return
    const switchedOff = await this.db.transaction(async (tx) => {
      const settled = await this.repo.settleMany(
        done.map((o) => o.settle),
        tx.kysely,
      )
      const byEndpoint = new Map<string, Outcome[]>()
      for (const o of done) {
        if (!settled.has(o.d.id) || !o.ep) continue
        const list = byEndpoint.get(o.ep.id)
        if (list) list.push(o)
        else byEndpoint.set(o.ep.id, [o])
      }
      const off: { ep: EndpointRow; status: number | null }[] = []
      const reason = `${AUTO_DISABLE_AFTER} deliveries failed in a row`
      for (const list of byEndpoint.values()) {
        const last = list[list.length - 1]!
        let lastOk = -1
        for (let i = 0; i < list.length; i++) if (list[i]!.result.ok) lastOk = i
        const outcome = { at: last.at, lastStatus: last.result.status, reset: lastOk >= 0, failuresAfter: list.length - 1 - lastOk }
        if (await this.repo.recordOutcomes(last.ep!.id, outcome, AUTO_DISABLE_AFTER, reason, tx.kysely)) off.push({ ep: last.ep!, status: last.result.status })
      }
      return off
    })
    for (const { ep, status } of switchedOff) await this.switchedOff(ep, status)
  }

  /** Sends one delivery (no database write): what to settle it with. Never rejects. */
  async send(d: DeliveryRow, ep: EndpointRow | undefined): Promise<Outcome> {
    const token = d.claim_token
    if (ep?.enabled !== 1) {
      const error = ep ? 'endpoint switched off' : 'endpoint deleted'
      const settle: Settlement = {
        id: d.id,
        token,
        status: 'abandoned',
        attempts: null,
        deliveredAt: null,
        responseStatus: null,
        error,
        nextAttemptAt: null,
        payload: null,
      }
      return { d, ep: null, at: '', settle, result: { deliveryId: d.id, ok: false, status: null, error } }
    }
    const attempt = d.attempts + 1
    let status: number | null = null
    let error: string | null = null
    // The first attempt's body was made when the delivery was queued; later ones carry their number.
    let body = d.payload ?? ''
    const release = await this.slot(ep.url)
    try {
      if (attempt !== 1 || d.payload === null) body = this.bodyOf(d, attempt)
      // Checked again before every delivery: the URL may have been stored under other rules,
      // and the guard also checks the address actually connected to.
      status = await this.outbound.post(ep.url, { headers: signedHeaders(ep.secret, body, d.event, this.clock.now()), body, dispatcher: this.pool })
      if (status < 200 || status > 299) error = status >= 300 && status < 400 ? `http ${status} (redirects are not followed)` : `http ${status}`
    } catch (e) {
      error = describeSendError(e, this.opts.timeoutMs)
    } finally {
      release()
    }
    const now = this.clock.now()
    const at = now.toISOString()
    const payload = body === d.payload ? null : body
    if (!error) {
      const settle: Settlement = {
        id: d.id,
        token,
        status: 'delivered',
        attempts: attempt,
        deliveredAt: at,
        responseStatus: status,
        error: null,
        nextAttemptAt: null,
        payload,
      }
      return { d, ep, at, settle, result: { deliveryId: d.id, ok: true, status, error: null } }
    }
    const final = attempt >= MAX_ATTEMPTS
    const settle: Settlement = {
      id: d.id,
      token,
      status: final ? 'abandoned' : 'failed',
      attempts: attempt,
      deliveredAt: null,
      responseStatus: status,
      error,
      nextAttemptAt: final ? null : new Date(now.getTime() + backoffAfter(attempt)).toISOString(),
      payload,
    }
    return { d, ep, at, settle, result: { deliveryId: d.id, ok: false, status, error } }
  }

  /** Waits for one of the endpoint origin's `endpointConcurrency` slots (the timeout starts once sending starts). */
  private async slot(rawUrl: string): Promise<() => void> {
    let origin = this.origins.get(rawUrl)
    if (origin === undefined) {
      try {
        origin = new URL(rawUrl).origin
      } catch {
        origin = null
      }
      if (this.origins.size >= 10_000) this.origins.clear()
      this.origins.set(rawUrl, origin)
    }
    if (origin === null) return () => undefined
    let s = this.slots.get(origin)
    if (!s) this.slots.set(origin, (s = { active: 0, waiting: [] }))
    const state = s
    if (state.active >= this.endpointConcurrency) await new Promise<void>((resolve) => state.waiting.push(resolve))
    else state.active++
    return () => {
      const next = state.waiting.shift()
      if (next) next()
      else if (--state.active === 0) this.slots.delete(origin)
    }
  }

  private async switchedOff(ep: EndpointRow, status: number | null): Promise<void> {
    this.opts.log.warn({ endpointId: ep.id, workspaceId: ep.workspace_id }, 'webhook endpoint switched off after repeated failures')
    const owners = await this.users.owners(ep.workspace_id)
    await this.mailer
      .send({
        workspaceId: ep.workspace_id,
        to: owners.map((o) => o.email),
        subject: 'A webhook endpoint was switched off',
        text:
          `The webhook endpoint ${ep.id} (${ep.url}) was switched off after ${AUTO_DISABLE_AFTER} failed deliveries in a row` +
          `${status !== null ? ` (last answer: HTTP ${status})` : ''}.\n\nFix the receiver, then switch the endpoint on again ` +
          `(PATCH /v1/webhooks/${ep.id} with {"enabled": true}). Deliveries can be replayed from the delivery log.`,
      })
      .catch((err) => this.opts.log.error({ err }, 'auto-disable mail failed'))
  }

  /** Inserts a delivery already claimed by this call and sends it at once (test, replay). */
  private async sendNow(ep: EndpointRow, e: { event: string; occurredAt: string; data: unknown }, replayOf: string | null = null): Promise<SendResult> {
    const claimToken = randomUUID()
    const id = await this.insertDelivery(this.db, ep, e, { replayOf, claimToken })
    return this.attempt((await this.repo.deliveryById(id)) as DeliveryRow)
  }

  /** Sends a real signed `screen.offline` with `data.test` true; 409 when not subscribed or switched off. */
  async test(p: Principal, id: string): Promise<SendResult> {
    const ep = await this.row(p, id)
    if (ep.enabled !== 1 || !parseJson<string[]>(ep.events, []).includes('screen.offline')) {
      throw new ApiError(
        'not_subscribed',
        ep.enabled !== 1 ? 'The endpoint is switched off; switch it on to test it.' : 'The endpoint is not subscribed to screen.offline, which the test sends.',
      )
    }
    const now = this.clock.now().toISOString()
    return this.sendNow(ep, {
      event: 'screen.offline',
      occurredAt: now,
      data: {
        test: true,
        note: 'This is a test delivery sent from the webhook settings; no screen went offline.',
        screenId: 'scr_test',
        screenName: 'Test screen',
        nodeId: null,
        at: now,
        since: now,
      },
    })
  }

  /** Resends a delivery as a new one (`replayOf` set); the original stays as it is. */
  async replay(p: Principal, deliveryId: string): Promise<SendResult> {
    const orig = await this.repo.delivery(p.workspaceId, deliveryId)
    if (!orig) throw notFound('No such delivery.')
    const ep = (await this.repo.endpoint(p.workspaceId, orig.endpoint_id)) as EndpointRow | undefined
    if (!ep) throw notFound('The endpoint of this delivery no longer exists.')
    const e = { event: orig.event, occurredAt: orig.occurred_at, data: parseJson<unknown>(orig.data, {}) }
    if (ep.enabled !== 1) {
      const error = 'endpoint switched off'
      const id = await this.insertDelivery(this.db, ep, e, { replayOf: orig.id, status: 'abandoned', error })
      return { deliveryId: id, ok: false, status: null, error }
    }
    return this.sendNow(ep, e, orig.id)
  }

  async listDeliveries(p: Principal, page: PageRequest, filter: { endpointId?: string | undefined; status?: string | undefined }): Promise<Page<DeliveryView>> {
    // Another status value is ignored, not refused.
    const status = filter.status && (DELIVERY_STATUSES as readonly string[]).includes(filter.status) ? filter.status : undefined
    const rows = (await this.repo.deliveries(
      p.workspaceId,
      { ...(filter.endpointId ? { endpointId: filter.endpointId } : {}), ...(status ? { status } : {}) },
      page,
    )) as DeliveryRow[]
    return pageOf(rows, page, deliveryView)
  }

  async getDelivery(workspaceId: string, id: string): Promise<DeliveryView | undefined> {
    const r = (await this.repo.delivery(workspaceId, id)) as DeliveryRow | undefined
    return r && deliveryView(r)
  }

  /** Drops log entries older than 30 days. */
  async purge(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - RETENTION_MS).toISOString()
    return this.repo.purgeBefore(cutoff)
  }
}

function cutDescription(d: string | null | undefined): string | null {
  if (d === undefined || d === null) return null
  const t = d.trim()
  return t ? [...t].slice(0, DESCRIPTION_MAX).join('') : null
}
