// The only code that reads or writes `play_log` (proof of play), and what the play log reads
// of `screens` (a screen's workspace and pairing time, a workspace's screen count). A record's id is a hash of
// the screen and every field the device sent, so storing a batch twice (re-sent after a
// lost PUBACK, or after an agent restart before it acknowledged) inserts nothing the second
// time: `ON CONFLICT (id) DO NOTHING`, on SQLite and PostgreSQL alike.
import { createHash } from 'node:crypto'
import { type Selectable, sql } from 'kysely'
import { withinNodes } from '../../platform/db/keyset.js'
import type { Executor } from '../../platform/db/Database.js'
import type { PlayLogTable } from '../../platform/db/schema.js'
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

export class PlayLogRepository {
  constructor(private readonly k: Executor) {}

  /** Stores records of one screen; returns how many were new. */
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
    let added = 0
    for (let i = 0; i < rows.length; i += CHUNK) {
      const res = await k
        .insertInto('play_log')
        .values(rows.slice(i, i + CHUNK))
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst()
      added += Number(res.numInsertedOrUpdatedRows ?? 0n)
    }
    return added
  }

  /** Plays of some screens started within the range, oldest first, after `after`; at most `limit` (null = all). */
  list(workspaceId: string, screenIds: readonly string[], range: PlayLogRange, after: PlayLogPosition | null, limit: number | null): Promise<PlayLogRow[]> {
    if (!screenIds.length) return Promise.resolve([])
    let q = this.k
      .selectFrom('play_log')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('screen_id', 'in', [...screenIds])
    if (range.from) q = q.where('started_at', '>=', range.from)
    if (range.to) q = q.where('started_at', '<', range.to)
    if (after) q = q.where((eb) => eb.or([eb('started_at', '>', after.startedAt), eb.and([eb('started_at', '=', after.startedAt), eb('id', '>', after.id)])]))
    q = q.orderBy('started_at', 'asc').orderBy('id', 'asc')
    if (limit !== null) q = q.limit(limit)
    return q.execute()
  }

  /**
   * Plays started in [from, to) per content (kind, id order, after `after`), of the screens
   * homed in `scopeIds` and `nodeIds` (null: any): how many, their milliseconds, those with the
   * panel on, and how many screens played it.
   */
  async summary(
    workspaceId: string,
    range: { from: string; to: string },
    f: { scopeIds: readonly string[] | null; nodeIds: readonly string[] | null; contentKind?: string | undefined; contentId?: string | undefined },
    after: { kind: string; id: string } | null,
    limit: number,
  ): Promise<PlaySummaryRow[]> {
    let q = this.k
      .selectFrom('play_log as p')
      .innerJoin('screens as s', 's.id', 'p.screen_id')
      .select([
        'p.content_kind',
        'p.content_id',
        sql<number | string>`count(*)`.as('plays'),
        sql<number | string>`sum(p.duration_ms)`.as('ms'),
        sql<number | string>`sum(case when p.panel_power = 'on' then p.duration_ms else 0 end)`.as('ms_on'),
        sql<number | string>`count(distinct p.screen_id)`.as('screens'),
      ])
      .where('p.workspace_id', '=', workspaceId)
      .where('p.started_at', '>=', range.from)
      .where('p.started_at', '<', range.to)
    q = withinNodes(q, 's.node_id', f.scopeIds)
    q = withinNodes(q, 's.node_id', f.nodeIds)
    if (f.contentKind) q = q.where('p.content_kind', '=', f.contentKind)
    if (f.contentId) q = q.where('p.content_id', '=', f.contentId)
    if (after)
      q = q.where((eb) => eb.or([eb('p.content_kind', '>', after.kind), eb.and([eb('p.content_kind', '=', after.kind), eb('p.content_id', '>', after.id)])]))
    const rows = await q.groupBy(['p.content_kind', 'p.content_id']).orderBy('p.content_kind').orderBy('p.content_id').limit(limit).execute()
    return rows.map((r) => ({
      content_kind: r.content_kind,
      content_id: r.content_id,
      plays: Number(r.plays),
      ms: Number(r.ms),
      ms_on: Number(r.ms_on),
      screens: Number(r.screens),
    }))
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

  /** Deletes plays started before `cutoff` (UTC ISO), in every workspace; returns how many. */
  async deleteStartedBefore(cutoff: string): Promise<number> {
    const res = await this.k.deleteFrom('play_log').where('started_at', '<', cutoff).executeTakeFirst()
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
