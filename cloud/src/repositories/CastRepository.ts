// The only code that reads or writes `casts` and `cast_screens`.
import type { Selectable } from 'kysely'
import type { Executor } from '../db/Database.js'
import type { CastsTable } from '../db/schema.js'
import { withinNodes } from './paging.js'

export type CastRecord = Selectable<CastsTable>

const LIVE = ['active', 'paused']
const ENDED = ['cleared', 'expired', 'replaced']
const CHUNK = 500

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
   * Inserts a cast holding `screenIds`; it takes them from older live casts, and an older
   * cast left with no screen is `replaced` by it. Returns the older casts it took from.
   */
  async insertTakingScreens(row: CastRecord, screenIds: string[], k: Executor): Promise<string[]> {
    await k.insertInto('casts').values(row).execute()
    const older = await this.liveOnScreens(screenIds, k)
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      const chunk = screenIds.slice(i, i + CHUNK)
      await k.updateTable('cast_screens').set({ state: 'replaced' }).where('state', '=', 'active').where('screen_id', 'in', chunk).execute()
      await k
        .insertInto('cast_screens')
        .values(chunk.map((s) => ({ cast_id: row.id, screen_id: s, state: 'active' })))
        .execute()
    }
    for (const o of older) {
      const left = await k
        .selectFrom('cast_screens')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('cast_id', '=', o)
        .where('state', '=', 'active')
        .executeTakeFirstOrThrow()
      if (!Number(left.n))
        await k
          .updateTable('casts')
          .set({ status: 'replaced', replaced_by: row.id, ended_at: row.triggered_at })
          .where('id', '=', o)
          .where('status', 'in', LIVE)
          .execute()
    }
    return older
  }

  /** Live casts holding any of these screens. */
  async liveOnScreens(screenIds: string[], k: Executor = this.k): Promise<string[]> {
    const out = new Set<string>()
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      const rows = await k
        .selectFrom('cast_screens')
        .select('cast_id')
        .distinct()
        .where('state', '=', 'active')
        .where('screen_id', 'in', screenIds.slice(i, i + CHUNK))
        .execute()
      for (const r of rows) out.add(r.cast_id)
    }
    return [...out]
  }

  /** Sets `paused` exactly when every screen a live cast still holds is under an active emergency, else `active`. */
  async refreshPause(castIds: string[], k: Executor): Promise<void> {
    if (!castIds.length) return
    const rows = await k
      .selectFrom('cast_screens as cs')
      .select((eb) => [
        'cs.cast_id',
        eb.fn.countAll<number>().as('total'),
        eb.fn
          .sum<number>(
            eb
              .case()
              .when(
                eb.exists(
                  eb
                    .selectFrom('emergency_screens as es')
                    .innerJoin('emergencies as e', 'e.id', 'es.emergency_id')
                    .select(eb.lit(1).as('one'))
                    .whereRef('es.screen_id', '=', 'cs.screen_id')
                    .where('es.active', '=', 1)
                    .where('e.status', '=', 'active'),
                ),
              )
              .then(1)
              .else(0)
              .end(),
          )
          .as('covered'),
      ])
      .where('cs.state', '=', 'active')
      .where('cs.cast_id', 'in', castIds)
      .groupBy('cs.cast_id')
      .execute()
    for (const r of rows) {
      const status = Number(r.total) > 0 && Number(r.covered) === Number(r.total) ? 'paused' : 'active'
      await k.updateTable('casts').set({ status }).where('id', '=', r.cast_id).where('status', 'in', LIVE).execute()
    }
  }

  /** Ends a live cast; returns the screens it held, or null when it was not live. */
  async end(id: string, status: 'cleared' | 'expired', at: string, k: Executor): Promise<string[] | null> {
    const r = await k.updateTable('casts').set({ status, ended_at: at }).where('id', '=', id).where('status', 'in', LIVE).executeTakeFirst()
    if (Number(r.numUpdatedRows) !== 1) return null
    const rows = await k.selectFrom('cast_screens').select('screen_id').where('cast_id', '=', id).where('state', '=', 'active').execute()
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
        .where('cs.state', '=', 'active')
        .where('c.status', 'in', LIVE)
        .where('c.workspace_id', '=', workspaceId)
        .orderBy('c.triggered_at', 'desc')
        .orderBy('c.id', 'desc')
        .execute()
      out.push(...rows)
    }
    return out
  }

  /** Records that a desired state carrying the cast was published to these screens (first time only). */
  async markPublished(castId: string, screenIds: readonly string[]): Promise<void> {
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      await this.k
        .updateTable('cast_screens')
        .set((eb) => ({ published_version: eb.selectFrom('screens').select('desired_version').whereRef('screens.id', '=', 'cast_screens.screen_id') }))
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
