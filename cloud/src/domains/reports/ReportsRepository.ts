// The reports' reads (screens, their presence and panel intervals overlapping a window,
// locations' and groups' names) and the one write they own: the panel history. Presence
// intervals are written by the device link with the status changes they follow; they are
// only read here.
import { type RawBuilder, sql } from 'kysely'
import type { Dialect, Executor } from '../../platform/db/Database.js'
import { withinNodes } from '../../platform/db/keyset.js'
import type { AvailabilityHoursTable, PanelIntervalsTable } from './tables.js'

const HOUR_MS = 3_600_000

/** A closed stretch waiting for the roll-up. */
export interface UnrolledRow {
  workspace_id: string
  screen_id: string
  started_at: string
  ended_at: string
}

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

/** One screen's stretches as one text: `start/end` items (end empty while open) joined by commas (intervals.ts parseSpans). */
export interface SpansRow {
  screen_id: string
  spans: string
}

export class ReportsRepository {
  constructor(
    private readonly k: Executor,
    /** Needed by the reads that aggregate text (spans); the others are the same on both engines. */
    private readonly dialect: Dialect = 'sqlite',
  ) {}

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

  /**
   * The stretches of these screens overlapping [from, to) not rolled up, one row per screen
   * holding them all as text (`start/end,start/end…`, in no set order): presence, or the
   * panel showing content. A row per screen rather than per stretch: the report reads
   * hundreds of thousands of stretches, and each row the driver builds costs more than the
   * stretch's few bytes of text.
   */
  spans(table: 'presence_intervals' | 'panel_intervals', screenIds: readonly string[], from: string, to: string): Promise<SpansRow[]> {
    if (!screenIds.length) return Promise.resolve([])
    const item = sql<string>`started_at || '/' || COALESCE(ended_at, '')`
    const agg = this.dialect === 'postgres' ? sql<string>`string_agg(${item}, ',')` : sql<string>`group_concat(${item}, ',')`
    let q = this.k
      .selectFrom(table)
      .select(['screen_id', agg.as('spans')])
      .where('screen_id', 'in', screenIds)
      .where('rolled', '<>', 1)
      .where('started_at', '<', to)
      .where((eb) => eb.or([eb('ended_at', 'is', null), eb('ended_at', '>', from)]))
    if (table === 'panel_intervals') q = q.where('showing', '=', 1)
    return q.groupBy('screen_id').execute()
  }

  /** The hourly roll-ups of these screens overlapping [from, to) (rows whose hour starts before `to` and ends after `from`). */
  hours(screenIds: readonly string[], from: string, to: string): Promise<Pick<AvailabilityHoursTable, 'screen_id' | 'online' | 'showing'>[]> {
    if (!screenIds.length) return Promise.resolve([])
    return this.k
      .selectFrom('availability_hours')
      .select(['screen_id', 'online', 'showing'])
      .where('screen_id', 'in', screenIds)
      .where('hour', '>', new Date(Date.parse(from) - HOUR_MS).toISOString())
      .where('hour', '<', to)
      .execute()
  }

  /** Closed stretches not yet looked at by the roll-up (presence, or the panel showing content), oldest screens first. */
  unrolled(table: 'presence_intervals' | 'panel_intervals', limit: number): Promise<UnrolledRow[]> {
    let q = this.k.selectFrom(table).select(['workspace_id', 'screen_id', 'started_at', 'ended_at']).where('rolled', '=', 0).where('ended_at', 'is not', null)
    if (table === 'panel_intervals') q = q.where('showing', '=', 1)
    return q.orderBy('screen_id').orderBy('started_at').limit(limit).execute() as Promise<UnrolledRow[]>
  }

  /** Marks stretches rolled (1) or kept (2): one statement per screen. */
  async markRolled(table: 'presence_intervals' | 'panel_intervals', rows: readonly UnrolledRow[], rolled: 1 | 2): Promise<void> {
    const byScreen = new Map<string, string[]>()
    for (const r of rows) byScreen.set(r.screen_id, [...(byScreen.get(r.screen_id) ?? []), r.started_at])
    for (const [screenId, starts] of byScreen)
      for (let i = 0; i < starts.length; i += SCREEN_BATCH)
        await this.k
          .updateTable(table)
          .set({ rolled })
          .where('screen_id', '=', screenId)
          .where('started_at', 'in', starts.slice(i, i + SCREEN_BATCH))
          .execute()
  }

  /** The roll-ups at these (screen, hour) keys. */
  async hoursAt(keys: readonly { screen_id: string; hour: string }[]): Promise<AvailabilityHoursTable[]> {
    const out: AvailabilityHoursTable[] = []
    const byScreen = new Map<string, string[]>()
    for (const k of keys) byScreen.set(k.screen_id, [...(byScreen.get(k.screen_id) ?? []), k.hour])
    const ids = [...byScreen.keys()]
    for (let i = 0; i < ids.length; i += SCREEN_BATCH) {
      const part = ids.slice(i, i + SCREEN_BATCH)
      const hours = [...new Set(part.flatMap((id) => byScreen.get(id)!))]
      for (let j = 0; j < hours.length; j += SCREEN_BATCH)
        out.push(
          ...(await this.k
            .selectFrom('availability_hours')
            .selectAll()
            .where('screen_id', 'in', part)
            .where('hour', 'in', hours.slice(j, j + SCREEN_BATCH))
            .execute()),
        )
    }
    return out
  }

  /** Writes roll-ups (replacing those at the same key). */
  async putHours(rows: readonly AvailabilityHoursTable[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 100)
      await this.k
        .insertInto('availability_hours')
        .values(rows.slice(i, i + 100))
        .onConflict((oc) => oc.columns(['screen_id', 'hour']).doUpdateSet((eb) => ({ online: eb.ref('excluded.online'), showing: eb.ref('excluded.showing') })))
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

  /**
   * Ends the open panel stretch of each screen (each at most once) at its row's `started_at`
   * and starts the row's stretch there, in two statements per chunk: one UPDATE ends every
   * open stretch at its screen's new `started_at` (a CASE on the screen id), one
   * multi-row INSERT starts the new stretches. A fleet reporting at once (a connect storm,
   * a cast) was two statements per screen.
   */
  async nextPanels(rows: readonly Omit<PanelIntervalsTable, 'rolled'>[]): Promise<void> {
    for (let i = 0; i < rows.length; i += SCREEN_BATCH) {
      const chunk = rows.slice(i, i + SCREEN_BATCH)
      const startOf = sql<string>`CASE screen_id ${sql.join(
        chunk.map((r) => sql`WHEN ${r.screen_id} THEN ${r.started_at}`),
        sql` `,
      )} END`
      await this.k
        .updateTable('panel_intervals')
        .set({ ended_at: startOf })
        .where(
          'screen_id',
          'in',
          chunk.map((r) => r.screen_id),
        )
        .where('ended_at', 'is', null)
        .where((eb) => eb('started_at', '<', startOf))
        .execute()
      await this.k
        .insertInto('panel_intervals')
        .values(chunk)
        .onConflict((oc) => oc.columns(['screen_id', 'started_at']).doNothing())
        .execute()
    }
  }

  /** Forgets history that ended before `before`, and that of deleted screens. */
  async purge(before: string): Promise<number> {
    let n = 0
    n += Number((await this.k.deleteFrom('availability_hours').where('hour', '<', before).executeTakeFirst()).numDeletedRows)
    n += Number(
      (
        await this.k
          .deleteFrom('availability_hours')
          .where('screen_id', 'not in', (eb) => eb.selectFrom('screens').select('id'))
          .executeTakeFirst()
      ).numDeletedRows,
    )
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
