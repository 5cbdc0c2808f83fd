// Sending deliveries: each body signed and POSTed through the SSRF guard's keep-alive pool
// (at most `endpointConcurrency` requests per endpoint origin), the outcomes recorded in one
// transaction per batch, an endpoint switched off (its Owners mailed) after repeated
// failures; and the test and replay sends of the webhook settings.
import { randomUUID } from 'node:crypto'
import type { Clock } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import type { Agent } from 'undici'
import { ApiError, notFound } from '../../platform/errors.js'
import type { OutboundGuard } from '../../platform/net/OutboundGuard.js'
import type { Principal } from '../../platform/http/Principal.js'
import type { Mailer } from '../mail/index.js'
import type { UserService } from '../access/index.js'
import { signedHeaders } from './signing.js'
import type { WebhookEndpoints } from './WebhookEndpoints.js'
import type { WebhookQueue } from './WebhookQueue.js'
import { WebhookRepository, type Settlement } from './WebhookRepository.js'
import {
  MAX_ATTEMPTS,
  AUTO_DISABLE_AFTER,
  ENDPOINT_CONCURRENCY,
  backoffAfter,
  parseJson,
  describeSendError,
  type EndpointRow,
  type DeliveryRow,
  type Outcome,
  type SendResult,
} from './model.js'

export class WebhookSender {
  /** Deliveries settled by this instance, by outcome (`delivered`, `failed`: to be retried, `abandoned`): the metrics. */
  readonly outcomes: Record<string, number> = { delivered: 0, failed: 0, abandoned: 0 }
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
    private readonly outbound: OutboundGuard,
    private readonly queue: WebhookQueue,
    private readonly endpoints: WebhookEndpoints,
    private readonly mailer: Mailer,
    private readonly users: UserService,
    private readonly opts: {
      timeoutMs: number
      log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void }
      /** Requests in flight (and connections) per endpoint origin at most; ENDPOINT_CONCURRENCY by default. */
      endpointConcurrency?: number
    },
  ) {
    this.repo = new WebhookRepository(db.kysely, db.dialect)
    this.endpointConcurrency = Math.max(1, Math.floor(opts.endpointConcurrency ?? ENDPOINT_CONCURRENCY))
    this.pool = outbound.pool(this.endpointConcurrency)
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
    const eps = await this.queue.endpointsOf(ds)
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
    let settled = new Set<string>()
    const switchedOff = await this.db.transaction(async (tx) => {
      settled = await this.repo.settleMany(
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
    // Counted once committed: a lost claim is another run's outcome.
    for (const o of done) if (settled.has(o.d.id)) this.outcomes[o.settle.status] = (this.outcomes[o.settle.status] ?? 0) + 1
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
      if (attempt !== 1 || d.payload === null) body = this.queue.bodyOf(d, attempt)
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
    const id = await this.queue.insertDelivery(this.db, ep, e, { replayOf, claimToken })
    return this.attempt((await this.repo.deliveryById(id)) as DeliveryRow)
  }

  /** Sends a real signed `screen.offline` with `data.test` true; 409 when not subscribed or switched off. */
  async test(p: Principal, id: string): Promise<SendResult> {
    const ep = await this.endpoints.row(p, id)
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
      const id = await this.queue.insertDelivery(this.db, ep, e, { replayOf: orig.id, status: 'abandoned', error })
      return { deliveryId: id, ok: false, status: null, error }
    }
    return this.sendNow(ep, e, orig.id)
  }
}
