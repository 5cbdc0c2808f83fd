// The only code that reads or writes `work_leases`. Taking or renewing a lease is one
// upsert whose update only applies when the row is ours or has lapsed, so two instances
// asking at once cannot both get it (on PostgreSQL the second waits on the row lock and
// then sees the first one's lease).
import type { Executor } from '../db/Database.js'

export class WorkLeaseRepository {
  constructor(private readonly k: Executor) {}

  /** Takes or renews `name` for `holder` until `until`; false when another holder's lease is still live at `now`. */
  async hold(name: string, holder: string, now: string, until: string): Promise<boolean> {
    const row = await this.k
      .insertInto('work_leases')
      .values({ name, holder, expires_at: until })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder, expires_at: until })
          .where((w) => w.or([w('work_leases.holder', '=', holder), w('work_leases.expires_at', '<=', now)])),
      )
      .returning('holder')
      .executeTakeFirst()
    return row?.holder === holder
  }

  /** Gives `name` up if `holder` has it (a clean stop lets another instance take over at once). */
  async release(name: string, holder: string): Promise<void> {
    await this.k.deleteFrom('work_leases').where('name', '=', name).where('holder', '=', holder).execute()
  }

  holderOf(name: string, now: string): Promise<string | undefined> {
    return this.k
      .selectFrom('work_leases')
      .select('holder')
      .where('name', '=', name)
      .where('expires_at', '>', now)
      .executeTakeFirst()
      .then((r) => r?.holder)
  }
}
