// Signed media URLs in a desired state expire (MediaUrlSigner: 7 days, rounded up to a
// UTC midnight). A screen whose desired state has not changed for half that time is
// republished, so its URLs are always at least ~3.5 days from expiry; the content is the
// same, only the URLs and the version move on.
import type { Clock } from '../clock.js'
import type { Database } from '../db/Database.js'
import type { MarkDirty } from '../services/CastService.js'
import { IntervalWorker } from './Worker.js'

const BATCH = 1000

export class MediaUrlRefreshWorker extends IntervalWorker {
  constructor(
    private readonly db: Database,
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
    const rows = await this.db.all<{ id: string; workspace_id: string }>(
      'SELECT id, workspace_id FROM screens WHERE desired_version > 0 AND (desired_published_at IS NULL OR desired_published_at < ?) ORDER BY desired_published_at, id LIMIT ?',
      [this.cutoff(), BATCH],
    )
    const byWorkspace = new Map<string, string[]>()
    for (const r of rows) byWorkspace.set(r.workspace_id, [...(byWorkspace.get(r.workspace_id) ?? []), r.id])
    for (const [ws, ids] of byWorkspace) await this.markDirty(ws, ids)
  }
}
