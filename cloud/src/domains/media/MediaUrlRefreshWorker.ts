// Signed media URLs in a desired state expire (MediaUrlSigner: 7 days, rounded up to a
// UTC midnight). A screen whose desired state has not changed for half that time is
// republished, so its URLs are always at least ~3.5 days from expiry; the content is the
// same, only the URLs and the version move on.
import type { Clock } from '../../platform/clock.js'
import type { MarkDirty, ScreenRecords } from '../screens/index.js'
import { IntervalWorker } from '../../platform/workers/Worker.js'

const BATCH = 1000

export class MediaUrlRefreshWorker extends IntervalWorker {
  constructor(
    private readonly screens: Pick<ScreenRecords, 'publishedBefore'>,
    private readonly clock: Clock,
    private readonly ttlSeconds: number,
    private readonly markDirty: MarkDirty,
    intervalMs: number,
    log: { error(obj: unknown, msg: string): void },
  ) {
    super(intervalMs, log)
  }

  /** Screens published before this moment are due. */
  cutoff(): string {
    return new Date(this.clock.now().getTime() - (this.ttlSeconds * 1000) / 2).toISOString()
  }

  protected async tick(): Promise<void> {
    const rows = await this.screens.publishedBefore(this.cutoff(), BATCH)
    const byWorkspace = new Map<string, string[]>()
    for (const r of rows) byWorkspace.set(r.workspace_id, [...(byWorkspace.get(r.workspace_id) ?? []), r.id])
    for (const [ws, ids] of byWorkspace) await this.markDirty(ws, ids)
  }
}
