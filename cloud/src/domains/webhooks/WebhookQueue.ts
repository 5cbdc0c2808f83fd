// The delivery queue and its log. Deliveries are a durable queue in the database: an event
// inserts one `pending` row per subscribed, enabled endpoint in the outbox's dispatch
// transaction (so the work survives a crash); WebhookDeliveryWorker claims due rows under a
// lease (`claimed_until`, `claim_token`) and hands them to the WebhookSender. A row claimed
// by a process that died is claimed again once its lease runs out: delivery is at least
// once, and receivers de-duplicate on `deliveryId`.
import { randomUUID } from 'node:crypto'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database, Queryable } from '../../platform/db/Database.js'
import type { DomainEvent } from '../events/index.js'
import type { Principal } from '../../platform/http/Principal.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import type { NewWebhookDelivery } from './tables.js'
import { WebhookRepository } from './WebhookRepository.js'
import {
  RETENTION_MS,
  DELIVERY_STATUSES,
  parseJson,
  deliveryView,
  type DeliveryStatus,
  type EndpointRow,
  type DeliveryRow,
  type DeliveryView,
} from './model.js'

export class WebhookQueue {
  private readonly repo: WebhookRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    /** How long a claim holds a delivery, ms. */
    private readonly leaseMs: number,
  ) {
    this.repo = new WebhookRepository(db.kysely, db.dialect)
  }

  /** The JSON body of a delivery's attempt `attempt` (the sender signs it). */
  bodyOf(d: Pick<DeliveryRow, 'id' | 'event' | 'occurred_at' | 'workspace_id' | 'data' | 'replay_of'>, attempt: number): string {
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

  /**
   * The same body from `dataJson`, the event's data as JSON text already (what the outbox
   * stores, or what JSON.stringify just made): spliced in as it is, not parsed and
   * serialised again. The same text as bodyOf() makes of it.
   */
  private bodyWith(d: Pick<DeliveryRow, 'id' | 'event' | 'occurred_at' | 'workspace_id' | 'replay_of'>, attempt: number, dataJson: string): string {
    const head = `{"deliveryId":${JSON.stringify(d.id)},"event":${JSON.stringify(d.event)},"occurredAt":${JSON.stringify(d.occurred_at)},"workspaceId":${JSON.stringify(d.workspace_id)},"attempt":${attempt},"data":${dataJson}`
    return d.replay_of ? `${head},"replayOf":${JSON.stringify(d.replay_of)}}` : `${head}}`
  }

  async insertDelivery(
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
    /** `e.data` as JSON text already (the outbox's stored data). */
    dataJson?: string,
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
      data: dataJson ?? JSON.stringify(e.data ?? {}),
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
      payload: this.bodyWith(row, 1, row.data),
      // A test or replay is inserted already claimed, so the worker cannot take it first.
      claim_token: extra.claimToken ?? null,
      claimed_until: extra.claimToken ? new Date(nowDate.getTime() + this.leaseMs).toISOString() : null,
    }
  }

  /**
   * A batch of events inside the caller's transaction (the event outbox's dispatch): each
   * workspace's enabled endpoints read once for the batch, the deliveries inserted together,
   * in event order. The caller kicks the worker after commit.
   */
  async enqueueManyIn(tx: Queryable, events: readonly DomainEvent[], storedData?: readonly string[]): Promise<string[]> {
    const workspaces = [...new Set(events.map((e) => e.workspaceId))]
    const byWorkspace = new Map<string, { ep: EndpointRow; events: string[] }[]>()
    for (const ep of (await this.repo.enabledEndpointsOf(workspaces, tx.kysely)) as EndpointRow[]) {
      const list = byWorkspace.get(ep.workspace_id) ?? []
      list.push({ ep, events: parseJson<string[]>(ep.events, []) })
      byWorkspace.set(ep.workspace_id, list)
    }
    const rows: (NewWebhookDelivery & { id: string })[] = []
    events.forEach((e, i) => {
      for (const { ep, events: subscribed } of byWorkspace.get(e.workspaceId) ?? [])
        if (subscribed.includes(e.event)) rows.push(this.deliveryRow(ep, e, {}, storedData?.[i]))
    })
    await this.repo.insertDeliveries(rows, tx.kysely)
    return rows.map((r) => r.id)
  }

  /** Claims up to `limit` due deliveries under a lease; another process skips them until it ends. */
  async claimDue(limit: number, skipEndpoints: readonly string[] = []): Promise<DeliveryRow[]> {
    const now = this.clock.now()
    const iso = now.toISOString()
    const token = randomUUID()
    return (await this.repo.claimDue(iso, new Date(now.getTime() + this.leaseMs).toISOString(), token, limit, skipEndpoints)) as DeliveryRow[]
  }

  /** Extends the lease of the deliveries still held under `tokens` by another lease length from now. */
  async renewLeases(tokens: readonly string[]): Promise<void> {
    await this.repo.renewLeases(tokens, new Date(this.clock.now().getTime() + this.leaseMs).toISOString())
  }

  /** The endpoints of claimed deliveries, in one read. */
  async endpointsOf(ds: readonly DeliveryRow[]): Promise<Map<string, EndpointRow>> {
    const rows = (await this.repo.endpointsByIds([...new Set(ds.map((d) => d.endpoint_id))])) as EndpointRow[]
    return new Map(rows.map((e) => [e.id, e]))
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
