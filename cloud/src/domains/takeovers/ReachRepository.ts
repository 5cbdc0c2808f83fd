// Reach receipts: each screen a cast or an emergency targeted, with how far the takeover got
// there (its rows in cast_screens / emergency_screens) and the screen's presence and last
// report (for `unreachable` and the panel's power).
import type { Executor } from '../../platform/db/Database.js'

export interface ReachRow {
  screen_id: string
  name: string
  status: string
  status_since: string | null
  reported: string | null
  published_at: string | null
  applied_at: string | null
}

export class ReachRepository {
  constructor(private readonly k: Executor) {}

  /** A page of the takeover's screens in id order, after `after`; `limit` null = all. */
  rows(kind: 'cast' | 'emergency', id: string, after: string | null, limit: number | null): Promise<ReachRow[]> {
    const q =
      kind === 'cast'
        ? this.k.selectFrom('cast_screens as t').where('t.cast_id', '=', id)
        : this.k.selectFrom('emergency_screens as t').where('t.emergency_id', '=', id)
    let page = q
      .innerJoin('screens as s', 's.id', 't.screen_id')
      .select(['t.screen_id', 's.name', 's.status', 's.status_since', 's.reported', 't.published_at', 't.applied_at'])
      .orderBy('t.screen_id')
    if (after !== null) page = page.where('t.screen_id', '>', after)
    if (limit !== null) page = page.limit(limit)
    return page.execute()
  }

  /** How many screens the takeover targeted. */
  async count(kind: 'cast' | 'emergency', id: string): Promise<number> {
    const q =
      kind === 'cast'
        ? this.k.selectFrom('cast_screens as t').where('t.cast_id', '=', id)
        : this.k.selectFrom('emergency_screens as t').where('t.emergency_id', '=', id)
    const r = await q
      .innerJoin('screens as s', 's.id', 't.screen_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** Active emergencies whose reach is not recorded yet and is due: started at or before `cutoff`, or applied by every screen. */
  reachDue(cutoff: string): Promise<{ id: string; workspace_id: string }[]> {
    return this.k
      .selectFrom('emergencies as e')
      .select(['e.id', 'e.workspace_id'])
      .where('e.status', '=', 'active')
      .where('e.reach_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb('e.started_at', '<=', cutoff),
          eb(
            'e.screen_count',
            '<=',
            eb
              .selectFrom('emergency_screens as x')
              .select((x) => x.fn.count<number>('x.applied_at').as('n'))
              .whereRef('x.emergency_id', '=', 'e.id'),
          ),
        ]),
      )
      .orderBy('e.id')
      .execute()
  }

  /** Marks the emergency's reach recorded; false when another call did it first. */
  async markReach(id: string, at: string): Promise<boolean> {
    const r = await this.k.updateTable('emergencies').set({ reach_at: at }).where('id', '=', id).where('reach_at', 'is', null).executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }
}
