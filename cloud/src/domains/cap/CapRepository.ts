// The only code that reads or writes `cap_feeds`, `cap_alerts` and `cap_cancels`.
import type { Insertable, Selectable, Updateable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import { withinNodes } from '../../platform/db/keyset.js'
import type { CapAlertsTable, CapFeedsTable } from './tables.js'

export type CapFeedRow = Selectable<CapFeedsTable>
export type CapAlertRow = Selectable<CapAlertsTable>

export class CapRepository {
  constructor(private readonly k: Executor) {}

  feed(workspaceId: string, id: string): Promise<CapFeedRow | undefined> {
    return this.k.selectFrom('cap_feeds').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst()
  }

  feedById(id: string): Promise<CapFeedRow | undefined> {
    return this.k.selectFrom('cap_feeds').selectAll().where('id', '=', id).executeTakeFirst()
  }

  feeds(workspaceId: string, scopeIds: string[] | null): Promise<CapFeedRow[]> {
    return withinNodes(this.k.selectFrom('cap_feeds').selectAll().where('workspace_id', '=', workspaceId), 'node_id', scopeIds)
      .orderBy('id')
      .limit(500)
      .execute()
  }

  async insertFeed(row: Insertable<CapFeedsTable>): Promise<void> {
    await this.k.insertInto('cap_feeds').values(row).execute()
  }

  async updateFeed(id: string, set: Updateable<CapFeedsTable>): Promise<void> {
    await this.k.updateTable('cap_feeds').set(set).where('id', '=', id).execute()
  }

  async deleteFeed(id: string): Promise<void> {
    await this.k.deleteFrom('cap_feeds').where('id', '=', id).execute()
    await this.k.deleteFrom('cap_cancels').where('feed_id', '=', id).execute()
  }

  /** Pull feeds due at `now`, oldest due first. */
  due(now: string, limit: number): Promise<CapFeedRow[]> {
    return this.k
      .selectFrom('cap_feeds')
      .selectAll()
      .where('mode', '=', 'pull')
      .where('next_fetch_at', '<=', now)
      .orderBy('next_fetch_at')
      .limit(limit)
      .execute()
  }

  /** Claims a due fetch for this instance: true when `next_fetch_at` was still `was` (one instance wins). */
  async claimFetch(id: string, was: string, next: string): Promise<boolean> {
    const u = await this.k.updateTable('cap_feeds').set({ next_fetch_at: next }).where('id', '=', id).where('next_fetch_at', '=', was).executeTakeFirst()
    return Number(u.numUpdatedRows) === 1
  }

  // ---- the alert log ----

  /** Inserts the alert's row unless (feed, sender, identifier) is already there: true when this call inserted it. */
  async claimAlert(row: Insertable<CapAlertsTable>): Promise<boolean> {
    const r = await this.k
      .insertInto('cap_alerts')
      .values(row)
      .onConflict((oc) => oc.columns(['feed_id', 'sender', 'identifier']).doNothing())
      .executeTakeFirst()
    return Number(r.numInsertedOrUpdatedRows ?? 0) === 1
  }

  alertByKey(feedId: string, sender: string, identifier: string): Promise<CapAlertRow | undefined> {
    return this.k
      .selectFrom('cap_alerts')
      .selectAll()
      .where('feed_id', '=', feedId)
      .where('sender', '=', sender)
      .where('identifier', '=', identifier)
      .executeTakeFirst()
  }

  alertById(id: string): Promise<CapAlertRow | undefined> {
    return this.k.selectFrom('cap_alerts').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** Writes a document's outcome if its handling still holds the lease `lease`: true when it did. */
  async finishAlert(id: string, lease: string, set: Updateable<CapAlertsTable>): Promise<boolean> {
    const u = await this.k
      .updateTable('cap_alerts')
      .set(set)
      .where('id', '=', id)
      .where('state', '=', 'received')
      .where('lease_until', '=', lease)
      .executeTakeFirst()
    return Number(u.numUpdatedRows) === 1
  }

  /** Documents left `received` past their lease (their handling was interrupted). */
  stuck(now: string, limit: number): Promise<CapAlertRow[]> {
    return this.k
      .selectFrom('cap_alerts')
      .selectAll()
      .where('state', '=', 'received')
      .where('lease_until', '<=', now)
      .orderBy('lease_until')
      .limit(limit)
      .execute()
  }

  /** Takes over a stuck document's handling: true when its lease was still `was` (one instance wins). */
  async renewLease(id: string, was: string | null, next: string): Promise<boolean> {
    if (was === null) return false
    const u = await this.k
      .updateTable('cap_alerts')
      .set({ lease_until: next })
      .where('id', '=', id)
      .where('state', '=', 'received')
      .where('lease_until', '=', was)
      .executeTakeFirst()
    return Number(u.numUpdatedRows) === 1
  }

  /** The feed's rows still holding an emergency. */
  holdingOfFeed(feedId: string): Promise<CapAlertRow[]> {
    return this.k.selectFrom('cap_alerts').selectAll().where('feed_id', '=', feedId).where('holding', '=', 1).execute()
  }

  /** Hands the holding of an emergency from one row to another (an Update): true when `from` still held it. */
  async passHolding(from: string, to: string, emergencyId: string, expires: string | null): Promise<boolean> {
    const u = await this.k.updateTable('cap_alerts').set({ holding: 0 }).where('id', '=', from).where('holding', '=', 1).executeTakeFirst()
    if (Number(u.numUpdatedRows) !== 1) return false
    await this.k.updateTable('cap_alerts').set({ holding: 1, expires, emergency_id: emergencyId }).where('id', '=', to).execute()
    return true
  }

  /** Lets go of a holding row: true when it still held (one instance wins a cancel or an expiry). */
  async release(id: string, set: Updateable<CapAlertsTable>): Promise<boolean> {
    const u = await this.k
      .updateTable('cap_alerts')
      .set({ ...set, holding: 0 })
      .where('id', '=', id)
      .where('holding', '=', 1)
      .executeTakeFirst()
    return Number(u.numUpdatedRows) === 1
  }

  /** The row holding an emergency (an Alert, or the Update that took it over). */
  holding(emergencyId: string): Promise<CapAlertRow | undefined> {
    return this.k.selectFrom('cap_alerts').selectAll().where('emergency_id', '=', emergencyId).where('holding', '=', 1).executeTakeFirst()
  }

  /** Holding rows whose expiry has come. */
  expired(now: string, limit: number): Promise<CapAlertRow[]> {
    return this.k.selectFrom('cap_alerts').selectAll().where('holding', '=', 1).where('expires', '<=', now).orderBy('expires').limit(limit).execute()
  }

  /** A page of the feed's log, newest first (ids are time-ordered). */
  alerts(feedId: string, after: string | null, limit: number): Promise<CapAlertRow[]> {
    let q = this.k.selectFrom('cap_alerts').selectAll().where('feed_id', '=', feedId)
    if (after) q = q.where('id', '<', after)
    return q.orderBy('id', 'desc').limit(limit).execute()
  }

  async seenUrl(feedId: string, url: string): Promise<boolean> {
    return Boolean(await this.k.selectFrom('cap_alerts').select('id').where('feed_id', '=', feedId).where('source_url', '=', url).executeTakeFirst())
  }

  async rememberCancel(feedId: string, sender: string, identifier: string, cancelAlertId: string): Promise<void> {
    await this.k
      .insertInto('cap_cancels')
      .values({ feed_id: feedId, sender, identifier, cancel_alert_id: cancelAlertId })
      .onConflict((oc) => oc.columns(['feed_id', 'sender', 'identifier']).doNothing())
      .execute()
  }

  cancelled(feedId: string, sender: string, identifier: string): Promise<{ cancel_alert_id: string } | undefined> {
    return this.k
      .selectFrom('cap_cancels')
      .select('cancel_alert_id')
      .where('feed_id', '=', feedId)
      .where('sender', '=', sender)
      .where('identifier', '=', identifier)
      .executeTakeFirst()
  }
}
