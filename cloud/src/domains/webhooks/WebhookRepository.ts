// The only code that reads or writes `webhook_endpoints` and `webhook_deliveries`.
// The delivery queue's claim is one UPDATE over a sub-select of due rows; on PostgreSQL
// the sub-select takes its rows `FOR UPDATE SKIP LOCKED`, so several processes claiming at
// once each get different deliveries instead of waiting on or double-claiming one another
// (SQLite has one writer at a time, so the plain statement is already exclusive).
import { sql } from 'kysely'
import type { Dialect, Executor } from '../../platform/db/Database.js'
import type { NewWebhookDelivery, WebhookDeliveryRow, WebhookEndpointRow, WebhookEndpointUpdate } from './tables.js'
import type { PageRequest } from '../../platform/paging.js'
import { paged } from '../../platform/db/keyset.js'

const RETRYABLE = ['pending', 'failed']
/** Deliveries per multi-row insert: 16 parameters each, inside both engines' limits. */
const DELIVERY_CHUNK = 200

/** One claimed delivery's outcome for settleMany; null `attempts`/`payload` leave the column as it is. */
export interface Settlement {
  id: string
  token: string | null
  status: string
  /** Null when nothing was sent (abandoned unsent): attempts and response status stay. */
  attempts: number | null
  deliveredAt: string | null
  responseStatus: number | null
  error: string | null
  nextAttemptAt: string | null
  payload: string | null
}

export class WebhookRepository {
  constructor(
    private readonly k: Executor,
    private readonly dialect: Dialect,
  ) {}

  // ---- endpoints ----

  endpoint(workspaceId: string, id: string): Promise<WebhookEndpointRow | undefined> {
    return this.k.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  /** By id alone: the delivery worker works across workspaces. */
  endpointById(id: string): Promise<WebhookEndpointRow | undefined> {
    return this.k.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst()
  }

  endpoints(workspaceId: string): Promise<WebhookEndpointRow[]> {
    return this.k.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).orderBy('id', 'desc').execute()
  }

  /** The enabled endpoints of several workspaces in one read (a batch of outbox events). */
  enabledEndpointsOf(workspaceIds: readonly string[], k: Executor = this.k): Promise<WebhookEndpointRow[]> {
    if (!workspaceIds.length) return Promise.resolve([])
    return k.selectFrom('webhook_endpoints').selectAll().where('workspace_id', 'in', workspaceIds).where('enabled', '=', 1).orderBy('id').execute()
  }

  async insertEndpoint(row: WebhookEndpointRow): Promise<void> {
    await this.k.insertInto('webhook_endpoints').values(row).execute()
  }

  async updateEndpoint(workspaceId: string, id: string, patch: WebhookEndpointUpdate): Promise<void> {
    await this.k.updateTable('webhook_endpoints').set(patch).where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
  }

  /** Deletes the endpoint; its pending and failed deliveries are abandoned (the log keeps them). */
  async deleteEndpoint(workspaceId: string, id: string, k: Executor = this.k): Promise<void> {
    await k
      .updateTable('webhook_deliveries')
      .set({ status: 'abandoned', error: 'endpoint deleted', next_attempt_at: null, claimed_until: null, claim_token: null })
      .where('endpoint_id', '=', id)
      .where('status', 'in', RETRYABLE)
      .execute()
    await k.deleteFrom('webhook_endpoints').where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
  }

  /** The endpoints of a claimed batch, in one read. */
  endpointsByIds(ids: string[]): Promise<WebhookEndpointRow[]> {
    if (!ids.length) return Promise.resolve([])
    return this.k.selectFrom('webhook_endpoints').selectAll().where('id', 'in', ids).execute()
  }

  /**
   * Records the outcomes of a batch of attempts to one endpoint, in one write: `reset` when
   * one of them succeeded (the count starts again from the failures after the last success),
   * else the failures are added to the count. Switches the endpoint off once `limit` failed
   * in a row; true when this call switched it off.
   */
  async recordOutcomes(
    endpointId: string,
    o: { at: string; lastStatus: number | null; reset: boolean; failuresAfter: number },
    limit: number,
    reason: string,
    k: Executor = this.k,
  ): Promise<boolean> {
    await k
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        consecutive_failures: o.reset ? o.failuresAfter : eb('consecutive_failures', '+', o.failuresAfter),
        last_delivery_at: o.at,
        last_status: o.lastStatus,
      }))
      .where('id', '=', endpointId)
      .execute()
    if (o.failuresAfter === 0) return false
    const off = await k
      .updateTable('webhook_endpoints')
      .set({ enabled: 0, auto_disabled_at: o.at, auto_disabled_reason: reason, updated_at: o.at })
      .where('id', '=', endpointId)
      .where('enabled', '=', 1)
      .where('consecutive_failures', '>=', limit)
      .executeTakeFirst()
    return Number(off.numUpdatedRows) === 1
  }

  // ---- deliveries ----

  async insertDelivery(row: NewWebhookDelivery, k: Executor = this.k): Promise<void> {
    await k.insertInto('webhook_deliveries').values(row).execute()
  }

  /** Inserts several deliveries, a multi-row statement per chunk. */
  async insertDeliveries(rows: readonly NewWebhookDelivery[], k: Executor = this.k): Promise<void> {
    for (let i = 0; i < rows.length; i += DELIVERY_CHUNK)
      await k
        .insertInto('webhook_deliveries')
        .values(rows.slice(i, i + DELIVERY_CHUNK))
        .execute()
  }

  delivery(workspaceId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
    return this.k.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  deliveryById(id: string): Promise<WebhookDeliveryRow | undefined> {
    return this.k.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst()
  }

  deliveries(workspaceId: string, filter: { endpointId?: string; status?: string }, page: PageRequest): Promise<WebhookDeliveryRow[]> {
    let q = this.k.selectFrom('webhook_deliveries').selectAll().where('workspace_id', '=', workspaceId)
    if (filter.endpointId) q = q.where('endpoint_id', '=', filter.endpointId)
    if (filter.status) q = q.where('status', '=', filter.status)
    return paged(q, page, 'desc').execute()
  }

  /**
   * Claims up to `limit` due deliveries (pending or failed, due by `now`, not under another
   * live lease) for `token` until `leaseUntil`, and returns them in due order.
   */
  async claimDue(now: string, leaseUntil: string, token: string, limit: number, skipEndpoints: readonly string[] = []): Promise<WebhookDeliveryRow[]> {
    await this.k
      .updateTable('webhook_deliveries')
      .set({ claimed_until: leaseUntil, claim_token: token })
      .where('id', 'in', (eb) => {
        let due = eb
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('status', 'in', RETRYABLE)
          .where('next_attempt_at', '<=', now)
          .where((w) => w.or([w('claimed_until', 'is', null), w('claimed_until', '<=', now)]))
        // Endpoints that already have a full queue in this process wait for the next claim.
        if (skipEndpoints.length) due = due.where('endpoint_id', 'not in', [...skipEndpoints])
        due = due.orderBy('next_attempt_at').orderBy('id').limit(limit)
        if (this.dialect === 'postgres') due = due.forUpdate().skipLocked()
        return due
      })
      .execute()
    return this.k.selectFrom('webhook_deliveries').selectAll().where('claim_token', '=', token).orderBy('next_attempt_at').orderBy('id').execute()
  }

  /** Pushes the lease of every delivery still claimed by one of `tokens` to `leaseUntil` (the claims are still being worked on). */
  async renewLeases(tokens: readonly string[], leaseUntil: string): Promise<void> {
    if (!tokens.length) return
    await this.k
      .updateTable('webhook_deliveries')
      .set({ claimed_until: leaseUntil })
      .where('claim_token', 'in', [...tokens])
      .execute()
  }

  /**
   * Ends many claimed deliveries in one statement (an UPDATE over a VALUES list, on both
   * engines); answers the ids it settled. A row whose claim token changed meanwhile (lease
   * lost and claimed again) is left alone, as settle() does.
   */
  async settleMany(rows: readonly Settlement[], k: Executor = this.k): Promise<Set<string>> {
    const done = new Set<string>()
    // 10 values a row; 500 rows stay far below either engine's parameter limit.
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500)
      const values = sql.join(
        chunk.map(
          (r) =>
            sql`(${r.id}, ${r.token}, ${r.status}, ${r.attempts === null ? null : String(r.attempts)}, ${r.deliveredAt}, ${r.attempts === null ? '0' : '1'}, ${r.responseStatus === null ? null : String(r.responseStatus)}, ${r.error}, ${r.nextAttemptAt}, ${r.payload})`,
        ),
      )
      // VALUES columns are text on PostgreSQL (untyped parameters): the integers are cast.
      const res = await sql<{
        id: string
      }>`WITH v(id, token, status, attempts, delivered_at, sent, response_status, error, next_attempt_at, payload) AS (VALUES ${values})
UPDATE webhook_deliveries SET
  status = v.status,
  attempts = COALESCE(CAST(v.attempts AS INTEGER), webhook_deliveries.attempts),
  delivered_at = COALESCE(v.delivered_at, webhook_deliveries.delivered_at),
  response_status = CASE WHEN v.sent = '1' THEN CAST(v.response_status AS INTEGER) ELSE webhook_deliveries.response_status END,
  error = v.error,
  next_attempt_at = v.next_attempt_at,
  payload = COALESCE(v.payload, webhook_deliveries.payload),
  claimed_until = NULL,
  claim_token = NULL
FROM v WHERE webhook_deliveries.id = v.id AND webhook_deliveries.claim_token = v.token
RETURNING webhook_deliveries.id`.execute(k)
      for (const r of res.rows) done.add(r.id)
    }
    return done
  }

  /** Ends a claimed delivery with `patch` (clears the lease); false when the claim was lost meanwhile. */
  async settle(id: string, token: string | null, patch: Partial<Omit<WebhookDeliveryRow, 'id'>>, k: Executor = this.k): Promise<boolean> {
    const r = await k
      .updateTable('webhook_deliveries')
      .set({ ...patch, claimed_until: null, claim_token: null })
      .where('id', '=', id)
      // A null token matches nothing, as `= NULL` does: an unclaimed row is never settled.
      .where('claim_token', '=', token as string)
      .executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  /** Drops log entries created before `cutoff`; returns how many. */
  async purgeBefore(cutoff: string): Promise<number> {
    const r = await this.k.deleteFrom('webhook_deliveries').where('created_at', '<', cutoff).executeTakeFirst()
    return Number(r.numDeletedRows)
  }
}
