// The presence columns of `screens` (status, status_since, last_seen_at, reported,
// reported_at) and the screen-to-workspace read the device link needs after a restart.
// Writes take batches of screens: a connect storm is a few statements per batch, not a
// few per device. Every status change is a conditional update, so `online`
// and `offline` alternate per screen even when several handlers race.
import { type Selectable, sql } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { DB } from '../../platform/db/schema.js'
import { announce } from '../../platform/db/changes.js'

/** What presence reads of a screen: its columns, as the table types them. */
export type PresenceRow = Pick<Selectable<DB['screens']>, 'id' | 'workspace_id' | 'name' | 'node_id' | 'status' | 'status_since'>

/** Rows per `IN (…)` list: well inside SQLite's and PostgreSQL's parameter limits. */
const CHUNK = 500
/** Screens per reported-state UPDATE (7 parameters each: within both engines' limits). */
const REPORTED_CHUNK = 200

function chunks<T>(xs: readonly T[]): T[][] {
  const out: T[][] = []
  for (let i = 0; i < xs.length; i += CHUNK) out.push(xs.slice(i, i + CHUNK))
  return out
}

export class ScreenPresenceRepository {
  constructor(private readonly k: Executor) {}

  /** The workspace of each of these screens that exists. */
  async workspacesOf(ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>()
    for (const part of chunks(ids)) {
      const rows = await this.k.selectFrom('screens').select(['id', 'workspace_id']).where('id', 'in', part).execute()
      for (const r of rows) out.set(r.id, r.workspace_id)
    }
    return out
  }

  /** Screens marked online (by this process or a previous one), with the last moment each was known connected. */
  async online(): Promise<{ id: string; last_seen_at: string | null }[]> {
    return this.k.selectFrom('screens').select(['id', 'last_seen_at']).where('status', '=', 'online').execute()
  }

  /** The presence rows of these screens, by id (absent: deleted). */
  async rows(ids: readonly string[]): Promise<Map<string, PresenceRow>> {
    const out = new Map<string, PresenceRow>()
    for (const part of chunks(ids)) {
      const rows = await this.k
        .selectFrom('screens')
        .select(['id', 'workspace_id', 'name', 'node_id', 'status', 'status_since'])
        .where('id', 'in', part)
        .execute()
      for (const r of rows) out.set(r.id, r)
    }
    return out
  }

  /** The stored `reported` text of these screens, by id (absent: deleted or never reported). */
  async reportedOf(ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>()
    for (const part of chunks(ids)) {
      const rows = await this.k.selectFrom('screens').select(['id', 'reported']).where('id', 'in', part).execute()
      for (const r of rows) if (r.reported) out.set(r.id, r.reported)
    }
    return out
  }

  /** Records that these screens were connected at `at`. */
  async touch(ids: readonly string[], at: string): Promise<void> {
    for (const part of chunks(ids)) await this.k.updateTable('screens').set({ last_seen_at: at }).where('id', 'in', part).execute()
    if (ids.length) announce(this.k, { kind: 'screens', screenIds: ids })
  }

  /**
   * Marks these screens online since `at` where they were not; resolves with those that
   * changed. Each of those starts a presence interval at `at` (one left open by a lost
   * offline is closed where the screen's outage began, its previous `status_since`).
   */
  async markOnline(ids: readonly string[], at: string): Promise<Set<string>> {
    const changed = new Set<string>()
    for (const part of chunks(ids)) {
      const before = await this.k.selectFrom('screens').select(['id', 'status_since']).where('id', 'in', part).where('status', '<>', 'online').execute()
      const rows = await this.k
        .updateTable('screens')
        .set({ status: 'online', status_since: at, last_seen_at: at })
        .where('id', 'in', part)
        .where('status', '<>', 'online')
        .returning(['id', 'workspace_id'])
        .execute()
      for (const r of rows) changed.add(r.id)
      if (!rows.length) continue
      const since = new Map(before.map((b) => [b.id, b.status_since]))
      const open = await this.k
        .selectFrom('presence_intervals')
        .select(['screen_id', 'started_at'])
        .where(
          'screen_id',
          'in',
          rows.map((r) => r.id),
        )
        .where('ended_at', 'is', null)
        .execute()
      for (const o of open) {
        const end = since.get(o.screen_id) ?? at
        await this.k
          .updateTable('presence_intervals')
          .set({ ended_at: end > o.started_at && end <= at ? end : o.started_at })
          .where('screen_id', '=', o.screen_id)
          .where('started_at', '=', o.started_at)
          .execute()
      }
      await this.k
        .insertInto('presence_intervals')
        .values(rows.map((r) => ({ workspace_id: r.workspace_id, screen_id: r.id, started_at: at, ended_at: null })))
        .onConflict((oc) => oc.columns(['screen_id', 'started_at']).doNothing())
        .execute()
    }
    if (changed.size) announce(this.k, { kind: 'screens', screenIds: [...changed] })
    return changed
  }

  /** Marks the screen offline since `since` if it was online, ending its presence interval there; true if it changed. */
  async markOffline(id: string, since: string): Promise<boolean> {
    return (await this.markOfflineMany([{ id, since }])).has(id)
  }

  /**
   * Marks each of these screens offline since its `since` where it was online, ending its
   * presence interval there; resolves with those that changed. Screens that dropped
   * together share their `since`: one UPDATE of `screens` and one of `presence_intervals`
   * per distinct `since` and 500 screens, not two per screen.
   */
  async markOfflineMany(items: readonly { id: string; since: string }[]): Promise<Set<string>> {
    const changed = new Set<string>()
    const bySince = new Map<string, string[]>()
    for (const { id, since } of items) {
      const ids = bySince.get(since)
      if (ids) ids.push(id)
      else bySince.set(since, [id])
    }
    for (const [since, ids] of bySince)
      for (const part of chunks(ids)) {
        const rows = await this.k
          .updateTable('screens')
          .set({ status: 'offline', status_since: since })
          .where('id', 'in', part)
          .where('status', '=', 'online')
          .returning('id')
          .execute()
        if (!rows.length) continue
        const ids = rows.map((r) => r.id)
        for (const id of ids) changed.add(id)
        // Never before the interval's start (a clock stepping back): an empty interval then.
        await this.k
          .updateTable('presence_intervals')
          .set({ ended_at: sql<string>`CASE WHEN started_at > ${since} THEN started_at ELSE ${since} END` })
          .where('screen_id', 'in', ids)
          .where('ended_at', 'is', null)
          .execute()
      }
    if (changed.size) announce(this.k, { kind: 'screens', screenIds: [...changed] })
    return changed
  }

  /**
   * Stores several screens' reported state: one UPDATE per 200 screens (each column a
   * `CASE id WHEN … THEN …`), not one per screen. A screen listed twice keeps its last entry.
   */
  async storeReportedMany(items: readonly { id: string; reported: string; at: string; agentVersion: string | null }[]): Promise<void> {
    const latest = [...new Map(items.map((it) => [it.id, it])).values()]
    for (let i = 0; i < latest.length; i += REPORTED_CHUNK) {
      const part = latest.slice(i, i + REPORTED_CHUNK)
      const byId = (value: (it: (typeof part)[number]) => string | null) =>
        sql<string>`CASE ${sql.ref('id')} ${sql.join(
          part.map((it) => sql`WHEN ${it.id} THEN ${value(it)}`),
          sql` `,
        )} END`
      await this.k
        .updateTable('screens')
        .set({
          reported: byId((it) => it.reported),
          reported_at: byId((it) => it.at),
          last_seen_at: byId((it) => it.at),
          agent_version: byId((it) => it.agentVersion),
        })
        .where(
          'id',
          'in',
          part.map((it) => it.id),
        )
        .execute()
    }
    if (latest.length) announce(this.k, { kind: 'screens', screenIds: latest.map((it) => it.id) })
  }

  /** Stores what the device reported; false when the screen no longer exists. */
  async storeReported(id: string, reported: string, at: string): Promise<boolean> {
    const r = await this.k.updateTable('screens').set({ reported, reported_at: at, last_seen_at: at }).where('id', '=', id).executeTakeFirst()
    announce(this.k, { kind: 'screens', screenIds: [id] })
    return Number(r.numUpdatedRows) === 1
  }
}
