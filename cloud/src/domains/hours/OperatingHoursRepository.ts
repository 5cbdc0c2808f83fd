// The owner of `operating_hours`: a location's or a screen's own hours.
import type { Executor } from '../../platform/db/Database.js'

export type HoursOwnerKind = 'node' | 'screen'

export interface HoursRow {
  owner_kind: string
  owner_id: string
  hours: string
  updated_at: string
}

export class OperatingHoursRepository {
  constructor(private readonly k: Executor) {}

  /** Every row of the workspace (a few: one per location or screen that has its own). */
  all(workspaceId: string): Promise<HoursRow[]> {
    return this.k.selectFrom('operating_hours').select(['owner_kind', 'owner_id', 'hours', 'updated_at']).where('workspace_id', '=', workspaceId).execute()
  }

  /**
   * The locations' rows of the workspace and those of these screens (not every screen's: a
   * fleet read a batch at a time reads only its batch's own hours).
   */
  async forScreens(workspaceId: string, screenIds: readonly string[]): Promise<HoursRow[]> {
    const q = this.k.selectFrom('operating_hours').select(['owner_kind', 'owner_id', 'hours', 'updated_at']).where('workspace_id', '=', workspaceId)
    const out = await q.where('owner_kind', '=', 'node').execute()
    for (let i = 0; i < screenIds.length; i += 500)
      out.push(
        ...(await q
          .where('owner_kind', '=', 'screen')
          .where('owner_id', 'in', screenIds.slice(i, i + 500))
          .execute()),
      )
    return out
  }

  async put(workspaceId: string, kind: HoursOwnerKind, id: string, hours: string, at: string): Promise<void> {
    await this.k
      .insertInto('operating_hours')
      .values({ workspace_id: workspaceId, owner_kind: kind, owner_id: id, hours, updated_at: at })
      .onConflict((oc) => oc.columns(['owner_kind', 'owner_id']).doUpdateSet({ hours, updated_at: at }))
      .execute()
  }

  async delete(workspaceId: string, kind: HoursOwnerKind, id: string): Promise<boolean> {
    const r = await this.k
      .deleteFrom('operating_hours')
      .where('workspace_id', '=', workspaceId)
      .where('owner_kind', '=', kind)
      .where('owner_id', '=', id)
      .executeTakeFirst()
    return Number(r.numDeletedRows) > 0
  }
}
