// What the takeovers domain hands other domains of its rows (the `takeoverRecords`
// provision): the casts and emergencies holding screens, read when a desired state is built,
// and the record of their publishing. The tables stay written by CastRepository and
// EmergencyRepository alone; other domains get these methods, not the repositories.
import type { Database } from '../../platform/db/Database.js'
import { CastRepository, type HeldCast } from './CastRepository.js'
import { EmergencyRepository, type HeldEmergency } from './EmergencyRepository.js'

export class TakeoverRecords {
  private readonly casts: CastRepository
  private readonly emergencies: EmergencyRepository

  constructor(private readonly db: Database) {
    this.casts = new CastRepository(db.kysely)
    this.emergencies = new EmergencyRepository(db.kysely)
  }

  /** The live casts holding each of these screens: one row per (screen, cast), newest cast first per screen. */
  castsHolding(workspaceId: string, screenIds: readonly string[]): Promise<HeldCast[]> {
    return this.casts.heldBy(workspaceId, screenIds)
  }

  /** The active emergencies holding each of these screens: one row per (screen, emergency), newest first per screen. */
  emergenciesHolding(workspaceId: string, screenIds: readonly string[]): Promise<HeldEmergency[]> {
    return this.emergencies.heldBy(workspaceId, screenIds)
  }

  /** Records, in one transaction, that desired states carrying these casts and emergencies (id → screens) were published. */
  async published(casts: ReadonlyMap<string, readonly string[]>, emergencies: ReadonlyMap<string, readonly string[]>, at: string | null): Promise<void> {
    if (!casts.size && !emergencies.size) return
    await this.db.transaction(async (tx) => {
      const castRepo = new CastRepository(tx.kysely)
      const emergencyRepo = new EmergencyRepository(tx.kysely)
      for (const [id, screenIds] of casts) await castRepo.markPublished(id, screenIds, at)
      for (const [id, screenIds] of emergencies) await emergencyRepo.markPublished(id, screenIds, at)
    })
  }

  /** Live casts and active emergencies showing this content (they block deleting it). */
  async countShowing(workspaceId: string, kind: string, contentId: string): Promise<number> {
    return (await this.casts.countShowing(workspaceId, kind, contentId)) + (await this.emergencies.countShowing(workspaceId, kind, contentId))
  }

  /** Screens held by a live cast or an active emergency showing any of `contentIds`, in id order. */
  async screensShowing(workspaceId: string, contentIds: readonly string[]): Promise<string[]> {
    const ids = new Set([...(await this.casts.screensShowing(workspaceId, contentIds)), ...(await this.emergencies.screensShowing(workspaceId, contentIds))])
    return [...ids].sort()
  }
}
