// Publishes desired states: retained, QoS 1, on svc/v1/screens/<id>/desired, each with
// the screen's next version (screens.desired_version, bumped in the database, so it keeps
// increasing across restarts and processes). markDirty() coalesces bursts: every screen
// marked before the next tick is published once, with everything that changed.
import type { Database } from '../db/Database.js'
import type { EmbeddedBroker } from '../broker/EmbeddedBroker.js'
import { encodeMessage, topics } from '@svc/shared/mqtt/index'
import type { DesiredStateBuilder } from './DesiredStateBuilder.js'

const CHUNK = 400
const CONCURRENCY = 16

export class DesiredStatePublisher {
  private pending = new Map<string, string>() // screenId → workspaceId
  private waiters: { resolve(): void; reject(e: unknown): void }[] = []
  private scheduled = false
  private chain: Promise<void> = Promise.resolve()
  private readonly publishedListeners: ((screenId: string, version: number) => void)[] = []

  constructor(
    private readonly db: Database,
    private readonly builder: DesiredStateBuilder,
    private readonly broker: Pick<EmbeddedBroker, 'publish'>,
    private readonly log: { error(obj: unknown, msg: string): void },
    /** When set, each publish records `screens.desired_published_at` (signed URLs are refreshed from it). */
    private readonly clock: { now(): Date } | null = null,
  ) {}

  /**
   * Marks screens whose desired state changed (assignment, casts, emergency, move, panel,
   * content). Resolves once they are published; callers that do not care need not wait.
   */
  markDirty(workspaceId: string, screenIds: readonly string[]): Promise<void> {
    for (const id of screenIds) this.pending.set(id, workspaceId)
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }))
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => this.flush())
    }
    return done
  }

  /** Tests and benches: called with each published screen and its version. */
  onPublished(listener: (screenId: string, version: number) => void): void {
    this.publishedListeners.push(listener)
  }

  /** Resolves when everything marked so far is published. */
  async idle(): Promise<void> {
    if (this.scheduled || this.pending.size) await this.markDirty('', [])
    await this.chain
  }

  private flush(): void {
    this.scheduled = false
    const batch = this.pending
    const waiters = this.waiters
    this.pending = new Map()
    this.waiters = []
    // One batch at a time, so a screen's versions go out in order.
    this.chain = this.chain.then(() =>
      this.publishBatch(batch).then(
        () => waiters.forEach((w) => w.resolve()),
        (err) => {
          this.log.error({ err }, 'publishing desired states failed')
          waiters.forEach((w) => w.reject(err))
        },
      ),
    )
  }

  private async publishBatch(batch: Map<string, string>): Promise<void> {
    const byWorkspace = new Map<string, string[]>()
    for (const [screenId, ws] of batch) {
      if (!ws) continue
      const list = byWorkspace.get(ws) ?? []
      list.push(screenId)
      byWorkspace.set(ws, list)
    }
    for (const [ws, ids] of byWorkspace) {
      for (let i = 0; i < ids.length; i += CHUNK) {
        const chunk = ids.slice(i, i + CHUNK)
        const versions = await this.bump(ws, chunk)
        const queue = [...versions]
        const worker = async (): Promise<void> => {
          for (let next = queue.shift(); next; next = queue.shift()) {
            const [screenId, version] = next
            const state = await this.builder.build(ws, screenId, version)
            if (!state) continue
            await this.broker.publish(topics.desired(screenId), encodeMessage(state), true)
            for (const l of this.publishedListeners) l(screenId, version)
          }
        }
        await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker))
      }
    }
  }

  /** Takes the next version of each screen in one transaction. */
  private async bump(workspaceId: string, screenIds: string[]): Promise<[string, number][]> {
    const marks = screenIds.map(() => '?').join(',')
    return this.db.transaction(async (tx) => {
      if (this.clock) {
        await tx.run(`UPDATE screens SET desired_version = desired_version + 1, desired_published_at = ? WHERE workspace_id = ? AND id IN (${marks})`, [
          this.clock.now().toISOString(),
          workspaceId,
          ...screenIds,
        ])
      } else await tx.run(`UPDATE screens SET desired_version = desired_version + 1 WHERE workspace_id = ? AND id IN (${marks})`, [workspaceId, ...screenIds])
      const rows = await tx.all<{ id: string; desired_version: number }>(
        `SELECT id, desired_version FROM screens WHERE workspace_id = ? AND id IN (${marks})`,
        [workspaceId, ...screenIds],
      )
      return rows.map((r) => [r.id, r.desired_version] as [string, number])
    })
  }
}
