// The only code that reads or writes `play_log` (proof of play), and what the play log reads
// of `screens` (a screen's workspace and pairing time, a workspace's screen count). A record's id is a hash of
// the screen and every field the device sent, so storing a batch twice (re-sent after a
// lost PUBACK, or after an agent restart before it acknowledged) inserts nothing the second
// time: `ON CONFLICT (id) DO NOTHING`, on SQLite and PostgreSQL alike.
import { createHash } from 'node:crypto'
import { type AliasedRawBuilder, type RawBuilder, type Selectable, type SelectQueryBuilder, sql } from 'kysely'
import { withinNodes } from '../../platform/db/keyset.js'
import type { Executor } from '../../platform/db/Database.js'
import type { DB } from '../../platform/db/schema.js'
import type { PlayLogTable } from './tables.js'
import type { TimeRange } from '../../platform/timeRange.js'
import type { PanelPower } from '@svc/shared/mqtt/index'

export type PlayLogRow = Selectable<PlayLogTable>

/** One content's plays in a summary (PlayLogRepository.summary). */
export interface PlaySummaryRow {
  content_kind: string
  content_id: string
  plays: number
  ms: number
  ms_on: number
  screens: number
}

/** What a summary counts: the screens reached, at or under locations, a group's members, one content. */
export interface SummaryFilter {
  scopeIds: readonly string[] | null
  nodeIds: readonly string[] | null
  /** A condition on the `screens` row (a group's members, as the targeting domain builds it). */
  where?: RawBuilder<boolean> | undefined
  contentKind?: string | undefined
  contentId?: string | undefined
}

/** A record as the device reports it (times already normalised to UTC ISO with milliseconds). */
export interface PlayLogInput {
  source: string
  contentKind: string
  contentId: string
  castId: string | null
  emergencyId: string | null
  itemKind: string
  itemId: string
  zone: string | null
  startedAt: string
  endedAt: string
  durationMs: number
  /** The panel's power when the play started (absent: `unknown`); not part of the record's id, so a re-sent play keeps its id. */
  panelPower?: PanelPower
}

/** Where a page of a time range starts: after this (startedAt, id). */
export interface PlayLogPosition {
  startedAt: string
  id: string
}

/** Bounds on started_at: from inclusive, to exclusive. */
export type PlayLogRange = TimeRange

/** Rows per INSERT: 15 columns × 60 stays far below SQLite's and PostgreSQL's parameter limits. */
const CHUNK = 60

export function playRecordId(screenId: string, r: PlayLogInput): string {
  const key = JSON.stringify([
    screenId,
    r.source,
    r.contentKind,
    r.contentId,
    r.castId,
    r.emergencyId,
    r.itemKind,
    r.itemId,
    r.zone,
    r.startedAt,
    r.endedAt,
    r.durationMs,
  ])
  return `play_${createHash('sha256').update(key).digest('base64url').slice(0, 32)}`
}

/** Where a summary's window is read: whole UTC days, whole hours, and plays one by one. */
export interface WindowPieces {
  /** `YYYY-MM-DD` from (inclusive) to (exclusive), or null. */
  days: [string, string] | null
  /** `YYYY-MM-DDTHH` ranges, from (inclusive) to (exclusive). */
  hours: [string, string][]
  /** ISO time ranges of single plays by start, from (inclusive) to (exclusive). */
  plays: [string, string][]
}

/**
 * Splits [from, to) into the whole UTC days inside it, the whole hours beside them, and the
 * partial hours at its ends: each play started in the window is in exactly one piece.
 */
export function windowPieces(range: { from: string; to: string }): WindowPieces {
  const from = Date.parse(range.from)
  const to = Date.parse(range.to)
  const iso = (ms: number) => new Date(ms).toISOString()
  const h0 = Math.ceil(from / HOUR_MS) * HOUR_MS
  const h1 = Math.floor(to / HOUR_MS) * HOUR_MS
  if (h1 <= h0) return { days: null, hours: [], plays: [[range.from, range.to]] }
  const d0 = Math.ceil(from / DAY_MS) * DAY_MS
  const d1 = Math.floor(to / DAY_MS) * DAY_MS
  const hour = (ms: number) => iso(ms).slice(0, 13)
  const hours: [number, number][] =
    d1 > d0
      ? [
          [h0, d0],
          [d1, h1],
        ]
      : [[h0, h1]]
  const plays: [number, number][] = [
    [from, h0],
    [h1, to],
  ]
  return {
    days: d1 > d0 ? [iso(d0).slice(0, 10), iso(d1).slice(0, 10)] : null,
    hours: hours.filter(([a, b]) => b > a).map(([a, b]) => [hour(a), hour(b)]),
    plays: plays.filter(([a, b]) => b > a).map(([a, b]) => [iso(a), iso(b)]),
  }
}

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/** What the parts of a window select beside their keys: the plays, their milliseconds and those with the panel on. */
type PieceSums = { plays: number; duration_ms: number; panel_on_ms: number }
/** A filter every part of the window applies (the three tables share the columns it names). */
type Narrow = <Q extends SelectQueryBuilder<DB, 'play_log' | 'play_log_daily' | 'play_log_hourly', object>>(q: Q) => Q

/**
 * A window's plays as one UNION ALL of its pieces (windowPieces): the whole UTC days from the
 * daily totals, the whole hours beside them from the hourly ones, the partial hours at its
 * ends from the plays themselves (one each). Every part selects `keys` (given the part's time
 * column: `period` for the totals, `started_at` for the plays), then `plays`, `duration_ms`
 * and `panel_on_ms`, in the workspace, narrowed by `narrow`; `K` names the keys' types.
 */
function piecesUnion<K extends object>(
  k: Executor,
  workspaceId: string,
  pieces: WindowPieces,
  narrow: Narrow,
  keys: (time: 'period' | 'started_at') => readonly (string | AliasedRawBuilder<unknown, string>)[],
): SelectQueryBuilder<DB, 'play_log', K & PieceSums> {
  // The three tables have these columns; the builders are typed on one of them.
  type Part = SelectQueryBuilder<DB, 'play_log', K & PieceSums>
  const totals = (table: 'play_log_daily' | 'play_log_hourly', [from, to]: [string, string]): Part =>
    narrow(
      k
        .selectFrom(table)
        .select([...keys('period'), 'plays', 'duration_ms', 'panel_on_ms'] as never)
        .where('workspace_id', '=', workspaceId)
        .where('period', '>=', from)
        .where('period', '<', to),
    ) as unknown as Part
  const plays = ([from, to]: [string, string]): Part =>
    narrow(
      k
        .selectFrom('play_log')
        .select([
          ...keys('started_at'),
          sql<number>`1`.as('plays'),
          'duration_ms',
          sql<number>`case when panel_power = 'on' then duration_ms else 0 end`.as('panel_on_ms'),
        ] as never)
        .where('workspace_id', '=', workspaceId)
        .where('started_at', '>=', from)
        .where('started_at', '<', to),
    ) as unknown as Part
  const parts = [
    ...(pieces.days ? [totals('play_log_daily', pieces.days)] : []),
    ...pieces.hours.map((h) => totals('play_log_hourly', h)),
    ...pieces.plays.map(plays),
  ]
  return parts.slice(1).reduce((all, part) => all.unionAll(part), parts[0]!)
}

export class PlayLogRepository {
  constructor(private readonly k: Executor) {}

  /** Stores records of one screen and adds them to its daily and hourly totals (run it in a transaction); returns how many were new. */
  async insert(workspaceId: string, screenId: string, records: PlayLogInput[], receivedAt: string, k: Executor = this.k): Promise<number> {
    const seen = new Set<string>()
    const rows = []
    for (const r of records) {
      const id = playRecordId(screenId, r)
      if (seen.has(id)) continue
      seen.add(id)
      rows.push({
        id,
        workspace_id: workspaceId,
        screen_id: screenId,
        source: r.source,
        content_kind: r.contentKind,
        content_id: r.contentId,
        cast_id: r.castId,
        emergency_id: r.emergencyId,
        item_kind: r.itemKind,
        item_id: r.itemId,
        zone: r.zone,
        started_at: r.startedAt,
        ended_at: r.endedAt,
        duration_ms: r.durationMs,
        received_at: receivedAt,
        panel_power: r.panelPower ?? 'unknown',
      })
    }
    // The totals gain exactly the rows this insert added (a re-sent record adds none).
    const added: typeof rows = []
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK)
      const ids = new Set(
        (
          await k
            .insertInto('play_log')
            .values(chunk)
            .onConflict((oc) => oc.column('id').doNothing())
            .returning('id')
            .execute()
        ).map((r) => r.id),
      )
      for (const r of chunk) if (ids.has(r.id)) added.push(r)
    }
    // Per day and per hour (the hour's key is `YYYY-MM-DDTHH`).
    for (const [table, keyLength] of [
      ['play_log_daily', 10],
      ['play_log_hourly', 13],
    ] as const) {
      const totals = new Map<string, { period: string; content_kind: string; content_id: string; plays: number; duration_ms: number; panel_on_ms: number }>()
      for (const r of added) {
        const period = r.started_at.slice(0, keyLength)
        const key = JSON.stringify([period, r.content_kind, r.content_id])
        const t = totals.get(key) ?? { period, content_kind: r.content_kind, content_id: r.content_id, plays: 0, duration_ms: 0, panel_on_ms: 0 }
        t.plays++
        t.duration_ms += r.duration_ms
        if (r.panel_power === 'on') t.panel_on_ms += r.duration_ms
        totals.set(key, t)
      }
      const rows = [...totals.values()].map(({ period, ...t }) => ({ workspace_id: workspaceId, screen_id: screenId, period, ...t }))
      for (let i = 0; i < rows.length; i += CHUNK) {
        await k
          .insertInto(table)
          .values(rows.slice(i, i + CHUNK))
          .onConflict((oc) =>
            oc.columns(['workspace_id', 'period', 'content_kind', 'content_id', 'screen_id']).doUpdateSet((eb) => ({
              plays: eb(`${table}.plays`, '+', eb.ref('excluded.plays')),
              duration_ms: eb(`${table}.duration_ms`, '+', eb.ref('excluded.duration_ms')),
              panel_on_ms: eb(`${table}.panel_on_ms`, '+', eb.ref('excluded.panel_on_ms')),
            })),
          )
          .execute()
      }
    }
    return added.length
  }

  /** Plays of some screens started within the range, oldest first, after `after`; at most `limit` (null = all). */
  list(
    workspaceId: string,
    screenIds: readonly string[],
    range: PlayLogRange,
    after: PlayLogPosition | null,
    limit: number | null,
    order: 'asc' | 'desc' = 'asc',
  ): Promise<PlayLogRow[]> {
    if (!screenIds.length) return Promise.resolve([])
    let q = this.k
      .selectFrom('play_log')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('screen_id', 'in', [...screenIds])
    if (range.from) q = q.where('started_at', '>=', range.from)
    if (range.to) q = q.where('started_at', '<', range.to)
    // Newest first pages backwards from the cursor (the same index read the other way).
    const past = order === 'asc' ? '>' : '<'
    if (after) q = q.where((eb) => eb.or([eb('started_at', past, after.startedAt), eb.and([eb('started_at', '=', after.startedAt), eb('id', past, after.id)])]))
    q = q.orderBy('started_at', order).orderBy('id', order)
    if (limit !== null) q = q.limit(limit)
    return q.execute()
  }

  /**
   * Plays started in [from, to) per content (kind, id order, after `after`), of the screens
   * homed in `scopeIds` and `nodeIds` (null: any): how many, their milliseconds, those with the
   * panel on, and how many screens played it. The whole UTC days inside the window come from
   * the daily totals, the whole hours beside them from the hourly ones, and only the partial
   * hours at its ends from the plays themselves (windowPieces).
   */
  async summary(
    workspaceId: string,
    range: { from: string; to: string },
    f: {
      scopeIds: readonly string[] | null
      nodeIds: readonly string[] | null
      /** A condition on the `screens` row (a group's members, as the targeting domain builds it). */
      where?: RawBuilder<boolean> | undefined
      contentKind?: string | undefined
      contentId?: string | undefined
    },
    after: { kind: string; id: string } | null,
    limit: number,
  ): Promise<PlaySummaryRow[]> {
    const pieces = windowPieces(range)
    // The filters each part applies before anything is added up: content, the page's
    // cursor, and the screens homed in the locations asked for.
    const narrow = <Q extends SelectQueryBuilder<DB, 'play_log' | 'play_log_daily' | 'play_log_hourly', object>>(q: Q): Q => {
      // The three tables have these columns; the builder is typed on one of them.
      let n = q as unknown as SelectQueryBuilder<DB, 'play_log', object>
      if (f.contentKind) n = n.where('content_kind', '=', f.contentKind)
      if (f.contentId) n = n.where('content_id', '=', f.contentId)
      if (after)
        n = n.where((eb) => eb.or([eb('content_kind', '>', after.kind), eb.and([eb('content_kind', '=', after.kind), eb('content_id', '>', after.id)])]))
      if (f.scopeIds !== null || f.nodeIds !== null || f.where)
        n = n.where('screen_id', 'in', (eb) => {
          let homed = eb.selectFrom('screens').select('id').where('workspace_id', '=', workspaceId)
          homed = withinNodes(homed, 'node_id', f.scopeIds)
          if (f.where) homed = homed.where(f.where)
          return withinNodes(homed, 'node_id', f.nodeIds)
        })
      return n as unknown as Q
    }
    // Per content and screen first (a hash aggregate), then per content: cheaper than a
    // count(distinct) over every row.
    const rows = await this.k
      .selectFrom((outer) =>
        outer
          .selectFrom(
            piecesUnion<{ content_kind: string; content_id: string; screen_id: string }>(this.k, workspaceId, pieces, narrow, () => [
              'content_kind',
              'content_id',
              'screen_id',
            ]).as('u'),
          )
          .select([
            'u.content_kind',
            'u.content_id',
            'u.screen_id',
            sql<number>`sum(u.plays)`.as('plays'),
            sql<number>`sum(u.duration_ms)`.as('ms'),
            sql<number>`sum(u.panel_on_ms)`.as('ms_on'),
          ])
          .groupBy(['u.content_kind', 'u.content_id', 'u.screen_id'])
          .as('g'),
      )
      .select([
        'g.content_kind',
        'g.content_id',
        sql<number | string>`sum(g.plays)`.as('plays'),
        sql<number | string>`sum(g.ms)`.as('ms'),
        sql<number | string>`sum(g.ms_on)`.as('ms_on'),
        sql<number | string>`count(*)`.as('screens'),
      ])
      .groupBy(['g.content_kind', 'g.content_id'])
      .orderBy('g.content_kind')
      .orderBy('g.content_id')
      .limit(limit)
      .execute()
    return rows.map((r) => ({
      content_kind: r.content_kind,
      content_id: r.content_id,
      plays: Number(r.plays),
      ms: Number(r.ms),
      ms_on: Number(r.ms_on),
      screens: Number(r.screens),
    }))
  }

  /**
   * The summary's plays per screen (and per UTC day with `byDay`) for the other ways of adding
   * them up (per screen, location, group, day): the same pieces and filters as `summary`.
   */
  async perScreen(
    workspaceId: string,
    range: { from: string; to: string },
    f: SummaryFilter,
    byDay: boolean,
  ): Promise<{ screen_id: string; day: string | null; plays: number; ms: number; ms_on: number }[]> {
    const pieces = windowPieces(range)
    const narrow = <Q extends SelectQueryBuilder<DB, 'play_log' | 'play_log_daily' | 'play_log_hourly', object>>(q: Q): Q => {
      let n = q as unknown as SelectQueryBuilder<DB, 'play_log', object>
      if (f.contentKind) n = n.where('content_kind', '=', f.contentKind)
      if (f.contentId) n = n.where('content_id', '=', f.contentId)
      n = n.where('screen_id', 'in', (eb) => {
        let homed = eb.selectFrom('screens').select('id').where('workspace_id', '=', workspaceId)
        homed = withinNodes(homed, 'node_id', f.scopeIds)
        if (f.where) homed = homed.where(f.where)
        return withinNodes(homed, 'node_id', f.nodeIds)
      })
      return n as unknown as Q
    }
    const day = (col: 'period' | 'started_at') => (byDay ? sql<string | null>`substr(${sql.ref(col)}, 1, 10)` : sql<string | null>`null`)
    const rows = await this.k
      .selectFrom(
        piecesUnion<{ screen_id: string; day: string | null }>(this.k, workspaceId, pieces, narrow, (time) => ['screen_id', day(time).as('day')]).as('u'),
      )
      .select([
        'u.screen_id',
        'u.day',
        sql<number | string>`sum(u.plays)`.as('plays'),
        sql<number | string>`sum(u.duration_ms)`.as('ms'),
        sql<number | string>`sum(u.panel_on_ms)`.as('ms_on'),
      ])
      .groupBy(['u.screen_id', 'u.day'])
      .orderBy('u.screen_id')
      .orderBy('u.day')
      .execute()
    return rows.map((r) => ({ screen_id: r.screen_id, day: r.day, plays: Number(r.plays), ms: Number(r.ms), ms_on: Number(r.ms_on) }))
  }

  /** Name and home of these screens of the workspace. */
  async screenHomes(workspaceId: string, ids: readonly string[]): Promise<Map<string, { name: string; node_id: string | null }>> {
    const out = new Map<string, { name: string; node_id: string | null }>()
    for (let i = 0; i < ids.length; i += 500)
      for (const r of await this.k
        .selectFrom('screens')
        .select(['id', 'name', 'node_id'])
        .where('workspace_id', '=', workspaceId)
        .where('id', 'in', ids.slice(i, i + 500))
        .execute())
        out.set(r.id, { name: r.name, node_id: r.node_id })
    return out
  }

  /**
   * Names of these content ids of the workspace, read by primary key: media files, then the
   * library's other kinds (playlists, layouts, apps, schedules). An id that is neither (gone,
   * or an item that is not a library entry) has none.
   */
  async contentNames(workspaceId: string, ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>()
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500)
      for (const table of ['media', 'content_items'] as const)
        for (const r of await this.k.selectFrom(table).select(['id', 'name']).where('workspace_id', '=', workspaceId).where('id', 'in', chunk).execute())
          if (!out.has(r.id)) out.set(r.id, r.name)
    }
    return out
  }

  /** Names of these locations of the workspace. */
  async nodeNames(workspaceId: string, ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>()
    for (let i = 0; i < ids.length; i += 500)
      for (const r of await this.k
        .selectFrom('nodes')
        .select(['id', 'name'])
        .where('workspace_id', '=', workspaceId)
        .where('id', 'in', ids.slice(i, i + 500))
        .execute())
        out.set(r.id, r.name)
    return out
  }

  /** The ids among `ids` matching `where` (a group's members among some screens). */
  async matching(workspaceId: string, where: RawBuilder<boolean>, ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>()
    for (let i = 0; i < ids.length; i += 500)
      for (const r of await this.k
        .selectFrom('screens')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where(where)
        .where('id', 'in', ids.slice(i, i + 500))
        .execute())
        out.add(r.id)
    return out
  }

  async count(workspaceId: string, screenIds: readonly string[], range: PlayLogRange): Promise<number> {
    if (!screenIds.length) return 0
    let q = this.k
      .selectFrom('play_log')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('screen_id', 'in', [...screenIds])
    if (range.from) q = q.where('started_at', '>=', range.from)
    if (range.to) q = q.where('started_at', '<', range.to)
    return Number((await q.executeTakeFirstOrThrow()).n)
  }

  /** Deletes plays started before `cutoff` (UTC ISO), in every workspace, and the daily totals of days before its day; returns how many plays. */
  async deleteStartedBefore(cutoff: string): Promise<number> {
    const res = await this.k.deleteFrom('play_log').where('started_at', '<', cutoff).executeTakeFirst()
    // A day's or an hour's totals go once the whole of it is past the cutoff.
    await this.k.deleteFrom('play_log_daily').where('period', '<', cutoff.slice(0, 10)).execute()
    await this.k.deleteFrom('play_log_hourly').where('period', '<', cutoff.slice(0, 13)).execute()
    return Number(res.numDeletedRows ?? 0n)
  }

  /** The workspace a screen belongs to (null: no such screen). */
  async workspaceOfScreen(screenId: string): Promise<string | null> {
    const row = await this.k.selectFrom('screens').select('workspace_id').where('id', '=', screenId).executeTakeFirst()
    return row?.workspace_id ?? null
  }

  /** What a batch of a screen is checked against: its workspace, when it was paired (created), its name and place; undefined: no such screen. */
  screenForPlays(screenId: string): Promise<{ workspace_id: string; created_at: string; name: string; node_id: string | null } | undefined> {
    return this.k.selectFrom('screens').select(['workspace_id', 'created_at', 'name', 'node_id']).where('id', '=', screenId).executeTakeFirst()
  }

  /** How many screens a workspace has. */
  async screenCount(workspaceId: string): Promise<number> {
    const row = await this.k
      .selectFrom('screens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /**
   * A screen's stored plays that end after `after` (UTC ISO), earliest end first, at most
   * `limit`: those a batch starting at `after` could overlap (index play_log_screen_end).
   */
  endingAfter(workspaceId: string, screenId: string, after: string, limit: number): Promise<Pick<PlayLogRow, 'id' | 'started_at' | 'ended_at'>[]> {
    return this.k
      .selectFrom('play_log')
      .select(['id', 'started_at', 'ended_at'])
      .where('workspace_id', '=', workspaceId)
      .where('screen_id', '=', screenId)
      .where('ended_at', '>', after)
      .orderBy('ended_at', 'asc')
      .limit(limit)
      .execute()
  }
}
