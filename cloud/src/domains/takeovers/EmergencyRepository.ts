// The only code that reads or writes `emergencies` and `emergency_screens`.
import { sql, type Selectable } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { EmergenciesTable } from './tables.js'
import { withinNodes } from '../../platform/db/keyset.js'
import type { ScreenIdQuery } from './CastRepository.js'

export type EmergencyRecord = Selectable<EmergenciesTable>

const CHUNK = 500

/** An active emergency holding a screen (EmergencyRepository.heldBy). */
export interface HeldEmergency {
  screen_id: string
  id: string
  content_kind: string | null
  content_id: string | null
  content_name: string | null
  message: string | null
  presentation: string
  alert: string | null
  started_at: string
}

/**
 * The read behind every desired state: the active emergencies holding these screens. It is
 * driven from the screens' active rows (emergency_screens(screen_id, active)), a few per
 * screen, then each emergency by its key. Joined the other way (SQLite's choice without
 * statistics: the workspace's emergencies by emergencies_workspace, then a key probe per
 * screen) it walked every emergency the workspace ever had, cleared ones too, for every
 * batch of screens: each fan-out cost more than the last as emergencies piled up. CROSS JOIN
 * fixes SQLite's join order (its documented manual control); PostgreSQL plans it as the
 * inner join it is.
 */
export function heldByQuery(k: Executor, workspaceId: string, screenIds: readonly string[]) {
  return k
    .selectFrom('emergency_screens as es')
    .crossJoin('emergencies as e')
    .whereRef('e.id', '=', 'es.emergency_id')
    .select(['es.screen_id', 'e.id', 'e.content_kind', 'e.content_id', 'e.content_name', 'e.message', 'e.presentation', 'e.alert', 'e.started_at'])
    .where('es.screen_id', 'in', screenIds)
    .where('es.active', '=', 1)
    .where('e.status', '=', 'active')
    .where('e.workspace_id', '=', workspaceId)
    .orderBy('e.started_at', 'desc')
    .orderBy('e.id', 'desc')
}

export class EmergencyRepository {
  constructor(private readonly k: Executor) {}

  byId(id: string, k: Executor = this.k): Promise<EmergencyRecord | undefined> {
    return k.selectFrom('emergencies').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** Newest first; `scopeIds` = home nodes the credential reaches (null = all). */
  list(workspaceId: string, scopeIds: string[] | null, filter: { status?: string; limit: number }): Promise<EmergencyRecord[]> {
    let q = withinNodes(this.k.selectFrom('emergencies').selectAll().where('workspace_id', '=', workspaceId), 'node_id', scopeIds)
    if (filter.status) q = q.where('status', '=', filter.status)
    return q.orderBy('started_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute()
  }

  /**
   * Inserts the emergency and holds the screens `screens` selects (one INSERT … SELECT);
   * returns how many it holds (`screen_count` is corrected to that when screens changed
   * since the row was made).
   */
  async insert(row: EmergencyRecord, screens: ScreenIdQuery, k: Executor): Promise<number> {
    await k.insertInto('emergencies').values(row).execute()
    const inserted = await k
      .insertInto('emergency_screens')
      .columns(['emergency_id', 'screen_id', 'active'])
      .expression(screens.clearSelect().select([sql<string>`CAST(${row.id} AS TEXT)`.as('emergency_id'), 'id', sql<number>`1`.as('active')]))
      .executeTakeFirst()
    const screenCount = Number(inserted.numInsertedOrUpdatedRows ?? 0)
    if (screenCount !== row.screen_count) await k.updateTable('emergencies').set({ screen_count: screenCount }).where('id', '=', row.id).execute()
    return screenCount
  }

  /** Active emergencies of the workspace aimed at a location, a group or everything (their screens follow the fleet). */
  following(workspaceId: string, k: Executor = this.k): Promise<EmergencyRecord[]> {
    return k
      .selectFrom('emergencies')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('status', '=', 'active')
      .where('scope_kind', 'in', ['node', 'group', 'all'])
      .execute()
  }

  /**
   * Sets an active emergency's screens to those `target` selects now: adds the screens that
   * came to match, drops those that stopped; answers both (none when it is no longer active).
   */
  async follow(id: string, target: ScreenIdQuery, k: Executor): Promise<{ added: string[]; removed: string[] }> {
    const live = await k.selectFrom('emergencies').select('status').where('id', '=', id).executeTakeFirst()
    if (live?.status !== 'active') return { added: [], removed: [] }
    const now = new Set((await target.execute()).map((r) => r.id))
    const held = new Set(
      (await k.selectFrom('emergency_screens').select('screen_id').where('emergency_id', '=', id).where('active', '=', 1).execute()).map((r) => r.screen_id),
    )
    const added = [...now].filter((s) => !held.has(s)).sort()
    const removed = [...held].filter((s) => !now.has(s)).sort()
    for (let i = 0; i < removed.length; i += CHUNK)
      await k
        .deleteFrom('emergency_screens')
        .where('emergency_id', '=', id)
        .where('screen_id', 'in', removed.slice(i, i + CHUNK))
        .execute()
    for (let i = 0; i < added.length; i += CHUNK) {
      const part = added.slice(i, i + CHUNK)
      await k.deleteFrom('emergency_screens').where('emergency_id', '=', id).where('screen_id', 'in', part).execute()
      await k
        .insertInto('emergency_screens')
        .values(part.map((screen_id) => ({ emergency_id: id, screen_id, active: 1 })))
        .execute()
    }
    if (added.length || removed.length) await k.updateTable('emergencies').set({ screen_count: now.size }).where('id', '=', id).execute()
    return { added, removed }
  }

  /** Every screen the emergency was given (the publisher reads them behind the start answer). */
  async screenIdsOf(emergencyId: string): Promise<string[]> {
    const rows = await this.k.selectFrom('emergency_screens').select('screen_id').where('emergency_id', '=', emergencyId).execute()
    return rows.map((r) => r.screen_id)
  }

  /**
   * Clears an active emergency and lets go of its screens; returns the screens it held, or
   * null when it was not active. `screens_released` counts those no other active emergency holds.
   */
  async clear(id: string, at: string, by: string, k: Executor): Promise<string[] | null> {
    const u = await k
      .updateTable('emergencies')
      .set({ status: 'cleared', cleared_at: at, cleared_by: by })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .executeTakeFirst()
    if (Number(u.numUpdatedRows) !== 1) return null
    const rows = await k.selectFrom('emergency_screens').select('screen_id').where('emergency_id', '=', id).where('active', '=', 1).execute()
    await k.updateTable('emergency_screens').set({ active: 0 }).where('emergency_id', '=', id).execute()
    const ids = rows.map((x) => x.screen_id)
    let stillHeld = 0
    for (let i = 0; i < ids.length; i += CHUNK) {
      const h = await k
        .selectFrom('emergency_screens as es')
        .innerJoin('emergencies as e', 'e.id', 'es.emergency_id')
        .select((eb) => eb.fn.count<number>('es.screen_id').distinct().as('n'))
        .where('es.active', '=', 1)
        .where('e.status', '=', 'active')
        .where('es.screen_id', 'in', ids.slice(i, i + CHUNK))
        .executeTakeFirstOrThrow()
      stillHeld += Number(h.n)
    }
    await k
      .updateTable('emergencies')
      .set({ screens_released: ids.length - stillHeld })
      .where('id', '=', id)
      .execute()
    return ids
  }

  /** Replaces an active emergency's message and presentation; answers its screens, or null when it is not active. */
  async replaceMessage(id: string, message: string | null, presentation: string, alert: string | null, k: Executor): Promise<string[] | null> {
    const u = await k.updateTable('emergencies').set({ message, presentation, alert }).where('id', '=', id).where('status', '=', 'active').executeTakeFirst()
    if (Number(u.numUpdatedRows) !== 1) return null
    const rows = await k.selectFrom('emergency_screens').select('screen_id').where('emergency_id', '=', id).where('active', '=', 1).execute()
    return rows.map((r) => r.screen_id)
  }

  /** The active emergency a CAP alert started, if any. */
  activeFromCapAlert(workspaceId: string, alertId: string): Promise<EmergencyRecord | undefined> {
    return this.k
      .selectFrom('emergencies')
      .selectAll()
      .where('source_cap_alert_id', '=', alertId)
      .where('workspace_id', '=', workspaceId)
      .where('status', '=', 'active')
      .executeTakeFirst()
  }

  // ---- desired state and delivery ----

  /** The active emergencies holding each of these screens: one row per (screen, emergency), newest first per screen. */
  async heldBy(workspaceId: string, screenIds: readonly string[]): Promise<HeldEmergency[]> {
    const out: HeldEmergency[] = []
    for (let i = 0; i < screenIds.length; i += CHUNK) out.push(...(await heldByQuery(this.k, workspaceId, screenIds.slice(i, i + CHUNK)).execute()))
    return out
  }

  /** Active emergencies showing this content (they block deleting it). */
  async countShowing(workspaceId: string, kind: string, contentId: string): Promise<number> {
    const r = await this.k
      .selectFrom('emergencies')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('content_kind', '=', kind)
      .where('content_id', '=', contentId)
      .where('status', '=', 'active')
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** Screens held by an active emergency showing any of `contentIds`. */
  async screensShowing(workspaceId: string, contentIds: readonly string[]): Promise<string[]> {
    const out: string[] = []
    for (let i = 0; i < contentIds.length; i += CHUNK) {
      const rows = await this.k
        .selectFrom('emergency_screens as es')
        .innerJoin('emergencies as e', 'e.id', 'es.emergency_id')
        .select('es.screen_id')
        .where('e.workspace_id', '=', workspaceId)
        .where('e.status', '=', 'active')
        .where('es.active', '=', 1)
        .where('e.content_id', 'in', contentIds.slice(i, i + CHUNK))
        .execute()
      for (const r of rows) out.push(r.screen_id)
    }
    return out
  }

  /** Records that a desired state carrying the emergency was published to these screens (first time only). */
  async markPublished(emergencyId: string, screenIds: readonly string[], at: string | null): Promise<void> {
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      await this.k
        .updateTable('emergency_screens')
        .set((eb) => ({
          published_version: eb.selectFrom('screens').select('desired_version').whereRef('screens.id', '=', 'emergency_screens.screen_id'),
          published_at: at,
        }))
        .where('emergency_id', '=', emergencyId)
        .where('screen_id', 'in', screenIds.slice(i, i + CHUNK))
        .where('published_version', 'is', null)
        .execute()
    }
  }

  /** Records that these screens reported the emergency playing (first time only). */
  async markApplied(emergencyId: string, screenIds: readonly string[], at: string): Promise<void> {
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      await this.k
        .updateTable('emergency_screens')
        .set({ applied_at: at })
        .where('emergency_id', '=', emergencyId)
        .where('screen_id', 'in', screenIds.slice(i, i + CHUNK))
        .where('applied_at', 'is', null)
        .execute()
    }
  }

  /** How many of its screens a desired state carrying the emergency was published to, and how many reported it playing. */
  async delivery(emergencyId: string): Promise<{ published: number; applied: number }> {
    const r = await this.k
      .selectFrom('emergency_screens')
      .select((eb) => [eb.fn.count<number>('published_version').as('published'), eb.fn.count<number>('applied_at').as('applied')])
      .where('emergency_id', '=', emergencyId)
      .executeTakeFirst()
    return { published: Number(r?.published ?? 0), applied: Number(r?.applied ?? 0) }
  }
}
