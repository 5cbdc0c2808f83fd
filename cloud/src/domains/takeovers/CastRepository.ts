// The only code that reads or writes `casts` and `cast_screens`.
//
// Which screens a cast still holds is derived, not stored per row: a row (cast, screen) with
// state 'active' is held unless a newer cast (a greater id: ids are time-ordered) has a row on
// the same screen, whatever that cast's status now. A newer cast takes a screen by inserting
// its own row; the older cast's rows are never rewritten (at 10,000 screens that rewrite was
// most of the takeover's answer on PostgreSQL). An older cast that holds no screen any more
// is `replaced` by the newer one, in the newer one's transaction. Rows written before this
// rule may carry state 'replaced': not 'active', so not held either.
import { sql, type Expression, type ExpressionBuilder, type Selectable, type SelectQueryBuilder, type SqlBool } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { DB } from '../../platform/db/schema.js'
import type { CastsTable } from './tables.js'
import { withinNodes } from '../../platform/db/keyset.js'

export type CastRecord = Selectable<CastsTable>
/** A subquery selecting screen ids (ScreenRepository.targetIds). */
export type ScreenIdQuery = SelectQueryBuilder<DB, 'screens', { id: string }>

const LIVE = ['active', 'paused']
const ENDED = ['cleared', 'expired', 'replaced']
const CHUNK = 500

/** No cast newer than `castRef` has a row on screen `screenRef` (one probe of cast_screens(screen_id, cast_id)). */
function notTaken(screenRef: string, castRef: string): Expression<SqlBool> {
  return sql<SqlBool>`NOT EXISTS (SELECT 1 FROM cast_screens AS newer WHERE newer.screen_id = ${sql.ref(screenRef)} AND newer.cast_id > ${sql.ref(castRef)})`
}

/** The cast_screens row named `alias` is held by its cast: state 'active' and no newer cast has a row on its screen. */
export function heldRow(alias: string): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.ref(`${alias}.state`)} = 'active' AND ${notTaken(`${alias}.screen_id`, `${alias}.cast_id`)})`
}

/**
 * The cast being updated (`casts`) still holds a screen outside `except` (screen ids): its
 * active rows minus `except` first, then the probe for "taken by a newer cast" on what is
 * left only, so the cost stays linear in the screens whatever the planner believes.
 */
function holdsOutside(eb: ExpressionBuilder<DB, 'casts'>, except: Expression<{ screen_id: string }>): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom(
        eb
          .selectFrom('cast_screens as cs')
          .select('cs.screen_id')
          .whereRef('cs.cast_id', '=', 'casts.id')
          .where('cs.state', '=', 'active')
          .except(except)
          .as('u'),
      )
      .select(eb.lit(1).as('one'))
      .where(notTaken('u.screen_id', 'casts.id')),
  )
}

/** A live cast holding a screen (CastRepository.heldBy). */
export interface HeldCast {
  screen_id: string
  id: string
  content_kind: string
  content_id: string
  content_name: string | null
  triggered_at: string
  expires_at: string | null
}

export class CastRepository {
  constructor(private readonly k: Executor) {}

  /** Newest first; `status` 'ended' = cleared, expired or replaced. */
  list(workspaceId: string, scopeIds: string[] | null, filter: { status?: string; limit: number }): Promise<CastRecord[]> {
    let q = withinNodes(this.k.selectFrom('casts').selectAll().where('workspace_id', '=', workspaceId), 'node_id', scopeIds)
    if (filter.status === 'ended') q = q.where('status', 'in', ENDED)
    else if (filter.status) q = q.where('status', '=', filter.status)
    return q.orderBy('triggered_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute()
  }

  /**
   * Inserts a cast holding the screens `screens` selects (set-based: one INSERT … SELECT);
   * its rows take those screens from older casts (see the top of the file: nothing of theirs
   * is rewritten), and an older live cast left with no screen is `replaced` by it. Returns the
   * older casts it took from and how many screens it holds (`screen_count` is corrected to
   * that when screens changed since the row was made).
   */
  async insertTakingScreens(row: CastRecord, screens: ScreenIdQuery, k: Executor): Promise<{ older: string[]; screenCount: number }> {
    await k.insertInto('casts').values(row).execute()
    const older = await this.liveOnTarget(row.workspace_id, screens, k)
    const inserted = await k
      .insertInto('cast_screens')
      .columns(['cast_id', 'screen_id', 'state'])
      .expression(screens.clearSelect().select([sql<string>`CAST(${row.id} AS TEXT)`.as('cast_id'), 'id', sql<string>`'active'`.as('state')]))
      .executeTakeFirst()
    const screenCount = Number(inserted.numInsertedOrUpdatedRows ?? 0)
    if (screenCount !== row.screen_count) await k.updateTable('casts').set({ screen_count: screenCount }).where('id', '=', row.id).execute()
    // An older cast holds nothing once its screens, less the ones this cast now holds, are all
    // taken by casts newer than it: a set difference, then a probe per screen left (none when
    // this cast covers it), not a probe per row.
    if (older.length)
      await k
        .updateTable('casts')
        .set({ status: 'replaced', replaced_by: row.id, ended_at: row.triggered_at })
        .where('id', 'in', older)
        .where('status', 'in', LIVE)
        .where((eb) => eb.not(holdsOutside(eb, eb.selectFrom('cast_screens as mine').select('mine.screen_id').where('mine.cast_id', '=', row.id))))
        .execute()
    return { older, screenCount }
  }

  /** Live casts of the workspace holding any of the screens `screens` selects. */
  async liveOnTarget(workspaceId: string, screens: ScreenIdQuery, k: Executor = this.k): Promise<string[]> {
    const rows = await k
      .selectFrom('casts as c')
      .select('c.id')
      .where('c.workspace_id', '=', workspaceId)
      .where('c.status', 'in', LIVE)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('cast_screens as cs')
            .select(eb.lit(1).as('one'))
            .whereRef('cs.cast_id', '=', 'c.id')
            .where('cs.screen_id', 'in', screens)
            .where(heldRow('cs')),
        ),
      )
      .execute()
    return rows.map((r) => r.id)
  }

  /** Every screen the cast was given (the publisher reads them behind the create answer). */
  async screenIdsOf(castId: string): Promise<string[]> {
    const rows = await this.k.selectFrom('cast_screens').select('screen_id').where('cast_id', '=', castId).execute()
    return rows.map((r) => r.screen_id)
  }

  /** Live casts holding any of these screens. */
  async liveOnScreens(screenIds: string[], k: Executor = this.k): Promise<string[]> {
    const out = new Set<string>()
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      const rows = await k
        .selectFrom('cast_screens as cs')
        .select('cs.cast_id')
        .distinct()
        .where('cs.screen_id', 'in', screenIds.slice(i, i + CHUNK))
        .where(heldRow('cs'))
        .execute()
      for (const r of rows) out.add(r.cast_id)
    }
    return [...out]
  }

  /**
   * Sets `paused` exactly when every screen a live cast still holds is under an active
   * emergency, else `active` (casts holding no screen are left alone). One statement; the
   * test is a set difference (the cast's screens EXCEPT the workspace's active emergencies'
   * screens, then "still held" on what is left), so its cost stays linear in the screens
   * whatever the planner believes about the rows (a nested loop over a misestimated
   * emergency set took 8 s on PostgreSQL at 10,000 screens).
   */
  async refreshPause(castIds: string[], k: Executor): Promise<void> {
    if (!castIds.length) return
    await k
      .updateTable('casts')
      .set((eb) => ({
        status: eb
          .case()
          // no active emergency in the workspace: nothing to read per screen
          .when(
            eb.not(
              eb.exists(
                eb
                  .selectFrom('emergencies as e')
                  .select(eb.lit(1).as('one'))
                  .whereRef('e.workspace_id', '=', 'casts.workspace_id')
                  .where('e.status', '=', 'active'),
              ),
            ),
          )
          .then(sql<string>`'active'`)
          // a screen the cast still holds that no active emergency covers (uncovered first, then
          // the probe for "taken by a newer cast" on those only)
          .when(
            holdsOutside(
              eb,
              eb
                .selectFrom('emergency_screens as es')
                .innerJoin('emergencies as e', 'e.id', 'es.emergency_id')
                .select('es.screen_id')
                .whereRef('e.workspace_id', '=', 'casts.workspace_id')
                .where('e.status', '=', 'active')
                .where('es.active', '=', 1),
            ),
          )
          .then(sql<string>`'active'`)
          .else(sql<string>`'paused'`)
          .end(),
      }))
      .where('id', 'in', castIds)
      .where('status', 'in', LIVE)
      .where((eb) => eb.exists(eb.selectFrom('cast_screens as cs').select(eb.lit(1).as('one')).whereRef('cs.cast_id', '=', 'casts.id').where(heldRow('cs'))))
      .execute()
  }

  /** Ends a live cast; returns the screens it held, or null when it was not live. */
  async end(id: string, status: 'cleared' | 'expired', at: string, k: Executor): Promise<string[] | null> {
    const r = await k.updateTable('casts').set({ status, ended_at: at }).where('id', '=', id).where('status', 'in', LIVE).executeTakeFirst()
    if (Number(r.numUpdatedRows) !== 1) return null
    const rows = await k.selectFrom('cast_screens as cs').select('cs.screen_id').where('cs.cast_id', '=', id).where(heldRow('cs')).execute()
    await k.updateTable('cast_screens').set({ state: 'ended' }).where('cast_id', '=', id).where('state', '=', 'active').execute()
    return rows.map((x) => x.screen_id)
  }

  /** Live casts whose expiresAt is at or before `now`, earliest first. */
  dueBy(now: string): Promise<{ id: string; workspace_id: string; expires_at: string | null }[]> {
    return this.k
      .selectFrom('casts')
      .select(['id', 'workspace_id', 'expires_at'])
      .where('status', 'in', LIVE)
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .execute()
  }

  async nextExpiry(): Promise<string | null> {
    const r = await this.k
      .selectFrom('casts')
      .select((eb) => eb.fn.min('expires_at').as('t'))
      .where('status', 'in', LIVE)
      .where('expires_at', 'is not', null)
      .executeTakeFirst()
    return (r?.t as string | null | undefined) ?? null
  }

  // ---- desired state and delivery ----

  /**
   * The live casts holding each of these screens (the builder's batch read): one row per
   * (screen, cast), newest cast first per screen.
   */
  async heldBy(workspaceId: string, screenIds: readonly string[]): Promise<HeldCast[]> {
    const out: HeldCast[] = []
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      const rows = await this.k
        .selectFrom('cast_screens as cs')
        .innerJoin('casts as c', 'c.id', 'cs.cast_id')
        .select(['cs.screen_id', 'c.id', 'c.content_kind', 'c.content_id', 'c.content_name', 'c.triggered_at', 'c.expires_at'])
        .where('cs.screen_id', 'in', screenIds.slice(i, i + CHUNK))
        .where(heldRow('cs'))
        .where('c.status', 'in', LIVE)
        .where('c.workspace_id', '=', workspaceId)
        .orderBy('c.triggered_at', 'desc')
        .orderBy('c.id', 'desc')
        .execute()
      out.push(...rows)
    }
    return out
  }

  /** Active or paused casts showing this content (they block deleting it). */
  async countShowing(workspaceId: string, kind: string, contentId: string): Promise<number> {
    const r = await this.k
      .selectFrom('casts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('content_kind', '=', kind)
      .where('content_id', '=', contentId)
      .where('status', 'in', LIVE)
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** Screens held by a live cast showing any of `contentIds`. */
  async screensShowing(workspaceId: string, contentIds: readonly string[]): Promise<string[]> {
    const out: string[] = []
    for (let i = 0; i < contentIds.length; i += CHUNK) {
      const rows = await this.k
        .selectFrom('cast_screens as cs')
        .innerJoin('casts as c', 'c.id', 'cs.cast_id')
        .select('cs.screen_id')
        .where('c.workspace_id', '=', workspaceId)
        .where('c.status', 'in', LIVE)
        .where(heldRow('cs'))
        .where('c.content_id', 'in', contentIds.slice(i, i + CHUNK))
        .execute()
      for (const r of rows) out.push(r.screen_id)
    }
    return out
  }

  /** Records that a desired state carrying the cast was published to these screens (first time only). */
  async markPublished(castId: string, screenIds: readonly string[], at: string | null): Promise<void> {
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      await this.k
        .updateTable('cast_screens')
        .set((eb) => ({
          published_version: eb.selectFrom('screens').select('desired_version').whereRef('screens.id', '=', 'cast_screens.screen_id'),
          published_at: at,
        }))
        .where('cast_id', '=', castId)
        .where('screen_id', 'in', screenIds.slice(i, i + CHUNK))
        .where('published_version', 'is', null)
        .execute()
    }
  }

  /** Records that these screens reported the cast playing (first time only). */
  async markApplied(castId: string, screenIds: readonly string[], at: string): Promise<void> {
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      await this.k
        .updateTable('cast_screens')
        .set({ applied_at: at })
        .where('cast_id', '=', castId)
        .where('screen_id', 'in', screenIds.slice(i, i + CHUNK))
        .where('applied_at', 'is', null)
        .execute()
    }
  }

  /** How many of its screens a desired state carrying the cast was published to, and how many reported it playing. */
  async delivery(castId: string): Promise<{ published: number; applied: number }> {
    const r = await this.k
      .selectFrom('cast_screens')
      .select((eb) => [eb.fn.count<number>('published_version').as('published'), eb.fn.count<number>('applied_at').as('applied')])
      .where('cast_id', '=', castId)
      .executeTakeFirst()
    return { published: Number(r?.published ?? 0), applied: Number(r?.applied ?? 0) }
  }
}
