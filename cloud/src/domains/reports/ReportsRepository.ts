// The reports' reads (screens, their presence and panel intervals overlapping a window,
// locations' and groups' names) and the one write they own: the panel history. Presence
// intervals are written by the device link with the status changes they follow; they are
// only read here.
import type { RawBuilder } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import { withinNodes } from '../../platform/db/keyset.js'
import type { PanelIntervalsTable } from './tables.js'

/** Screens per `IN (…)` list: well inside both engines' parameter limits. */
export const SCREEN_BATCH = 500

export interface ReportScreen {
  id: string
  name: string
  node_id: string | null
  timezone: string
  created_at: string
}

export interface ScreenFilter {
  /** Node ids the credential reaches; null = all. */
  scopeIds: readonly string[] | null
  /** Only screens homed at these nodes (null = any). */
  nodeIds: readonly string[] | null
  /** A condition on the `screens` row (a group's members). */
  where?: RawBuilder<boolean> | undefined
}

export interface IntervalRow {
  screen_id: string
  started_at: string
  ended_at: string | null
}

export class ReportsRepository {
  constructor(private readonly k: Executor) {}

  /** The workspace's screens matching the filter, in id order, a batch after `afterId`. */
  screens(workspaceId: string, f: ScreenFilter, afterId: string | null, limit: number): Promise<ReportScreen[]> {
    let q = withinNodes(this.k.selectFrom('screens').where('workspace_id', '=', workspaceId), 'node_id', f.scopeIds)
    q = withinNodes(q, 'node_id', f.nodeIds)
    if (f.where) q = q.where(f.where)
    if (afterId !== null) q = q.where('id', '>', afterId)
    return q.select(['id', 'name', 'node_id', 'timezone', 'created_at']).orderBy('id', 'asc').limit(limit).execute()
  }

  /** The ids among `ids` matching the filter (a group's members among some screens). */
  async matching(workspaceId: string, f: ScreenFilter, ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>()
    for (let i = 0; i < ids.length; i += SCREEN_BATCH) {
      let q = withinNodes(this.k.selectFrom('screens').where('workspace_id', '=', workspaceId), 'node_id', f.scopeIds)
      if (f.where) q = q.where(f.where)
      for (const r of await q
        .select('id')
        .where('id', 'in', ids.slice(i, i + SCREEN_BATCH))
        .execute())
        out.add(r.id)
    }
    return out
  }

  /** Presence intervals of these screens overlapping [from, to). */
  presence(screenIds: readonly string[], from: string, to: string): Promise<IntervalRow[]> {
    if (!screenIds.length) return Promise.resolve([])
    return this.k
      .selectFrom('presence_intervals')
      .select(['screen_id', 'started_at', 'ended_at'])
      .where('screen_id', 'in', screenIds)
      .where('started_at', '<', to)
      .where((eb) => eb.or([eb('ended_at', 'is', null), eb('ended_at', '>', from)]))
      .execute()
  }

  /** Stretches with the panel showing content, of these screens, overlapping [from, to). */
  showing(screenIds: readonly string[], from: string, to: string): Promise<IntervalRow[]> {
    if (!screenIds.length) return Promise.resolve([])
    return this.k
      .selectFrom('panel_intervals')
      .select(['screen_id', 'started_at', 'ended_at'])
      .where('screen_id', 'in', screenIds)
      .where('showing', '=', 1)
      .where('started_at', '<', to)
      .where((eb) => eb.or([eb('ended_at', 'is', null), eb('ended_at', '>', from)]))
      .execute()
  }

  /** Names of these locations. */
  async nodeNames(workspaceId: string, ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>()
    for (let i = 0; i < ids.length; i += SCREEN_BATCH) {
      const rows = await this.k
        .selectFrom('nodes')
        .select(['id', 'name'])
        .where('workspace_id', '=', workspaceId)
        .where('id', 'in', ids.slice(i, i + SCREEN_BATCH))
        .execute()
      for (const r of rows) out.set(r.id, r.name)
    }
    return out
  }

  /** The screen's panel stretch going on now, if any. */
  openPanel(screenId: string): Promise<Pick<PanelIntervalsTable, 'started_at' | 'power' | 'playing'> | undefined> {
    return this.k
      .selectFrom('panel_intervals')
      .select(['started_at', 'power', 'playing'])
      .where('screen_id', '=', screenId)
      .where('ended_at', 'is', null)
      .orderBy('started_at', 'desc')
      .executeTakeFirst()
  }

  /** The open panel stretch of each of `screenIds` (one read for a batch of reports). */
  openPanels(screenIds: readonly string[]): Promise<Pick<PanelIntervalsTable, 'screen_id' | 'started_at' | 'power' | 'playing'>[]> {
    if (!screenIds.length) return Promise.resolve([])
    return this.k
      .selectFrom('panel_intervals')
      .select(['screen_id', 'started_at', 'power', 'playing'])
      .where('screen_id', 'in', screenIds)
      .where('ended_at', 'is', null)
      .execute()
  }

  /** Ends the screen's open panel stretch at `at` and starts the next one there. */
  async nextPanel(row: PanelIntervalsTable): Promise<void> {
    await this.k
      .updateTable('panel_intervals')
      .set({ ended_at: row.started_at })
      .where('screen_id', '=', row.screen_id)
      .where('ended_at', 'is', null)
      .where('started_at', '<', row.started_at)
      .execute()
    await this.k
      .insertInto('panel_intervals')
      .values(row)
      .onConflict((oc) => oc.columns(['screen_id', 'started_at']).doNothing())
      .execute()
  }

  /** Forgets history that ended before `before`, and that of deleted screens. */
  async purge(before: string): Promise<number> {
    let n = 0
    for (const table of ['presence_intervals', 'panel_intervals'] as const) {
      const old = await this.k.deleteFrom(table).where('ended_at', '<', before).executeTakeFirst()
      const orphan = await this.k
        .deleteFrom(table)
        .where('screen_id', 'not in', (eb) => eb.selectFrom('screens').select('id'))
        .executeTakeFirst()
      n += Number(old.numDeletedRows) + Number(orphan.numDeletedRows)
    }
    return n
  }
}
