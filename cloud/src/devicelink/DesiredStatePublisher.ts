// Publishes desired states: retained, QoS 1, on svc/v1/screens/<id>/desired, each with
// the screen's next version (screens.desired_version, bumped in the database, so it keeps
// increasing across restarts and processes). markDirty() coalesces bursts: every screen
// marked before the next tick is published once, with everything that changed.
//
// Screens go out in chunks: per chunk one transaction takes the next versions, the builder
// builds the whole chunk with a few queries, every state is handed to the broker at once,
// and the casts and emergencies the states carry are recorded as published to those
// screens (their `delivery.published`). Chunks and batches run one after the other, so a
// screen's versions reach the broker in increasing order.
import type { Database } from '../db/Database.js'
import type { EmbeddedBroker } from '../broker/EmbeddedBroker.js'
import { encodeMessage, topics, type DesiredState } from '@svc/shared/mqtt/index'
import type { DesiredStateBuilder } from './DesiredStateBuilder.js'
import { ScreenRepository } from '../repositories/ScreenRepository.js'
import { CastRepository } from '../repositories/CastRepository.js'
import { EmergencyRepository } from '../repositories/EmergencyRepository.js'
import { FanOutWindow } from './FanOutWindow.js'

const CHUNK = 500

export class DesiredStatePublisher {
  private pending = new Map<string, string>() // screenId → workspaceId
  private waiters: { resolve(): void; reject(e: unknown): void }[] = []
  private scheduled = false
  /** Screen readers (markDirty with a function) not yet run. */
  private readonly loading = new Set<Promise<void>>()
  /** A batch is being published; marks made meanwhile wait for the next one. */
  private running = false
  private chain: Promise<void> = Promise.resolve()
  private readonly publishedListeners: ((screenId: string, version: number) => void)[] = []
  private readonly screens: ScreenRepository
  /** Open while a batch is out: background writes (reports, `applied`) wait for it to close. */
  readonly window = new FanOutWindow()

  constructor(
    private readonly db: Database,
    private readonly builder: DesiredStateBuilder,
    private readonly broker: Pick<EmbeddedBroker, 'publish'>,
    private readonly log: { error(obj: unknown, msg: string): void },
    /** When set, each publish records `screens.desired_published_at` (signed URLs are refreshed from it). */
    private readonly clock: { now(): Date } | null = null,
  ) {
    this.screens = new ScreenRepository(db.kysely)
  }

  /**
   * Marks screens whose desired state changed (assignment, casts, emergency, move, panel,
   * content). Resolves once they are published; callers that do not care need not wait.
   * `screens` may be a reader of the screen ids (a takeover's 10,000 screens): it runs on a
   * later turn, behind the caller's answer, and idle() waits for it.
   */
  markDirty(workspaceId: string, screens: readonly string[] | (() => Promise<readonly string[]>)): Promise<void> {
    if (typeof screens === 'function') return this.markDirtyLater(workspaceId, screens)
    const screenIds = screens
    for (const id of screenIds) this.pending.set(id, workspaceId)
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }))
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => this.flush())
    }
    return done
  }

  private markDirtyLater(workspaceId: string, read: () => Promise<readonly string[]>): Promise<void> {
    let marked: Promise<void> = Promise.resolve()
    const loaded = new Promise<void>((resolve) => setImmediate(resolve)).then(read).then((ids) => {
      marked = this.markDirty(workspaceId, ids)
    })
    const tracked: Promise<void> = loaded
      .catch((err) => this.log.error({ err, workspaceId }, 'reading the screens to republish failed'))
      .finally(() => this.loading.delete(tracked))
    this.loading.add(tracked)
    return loaded.then(() => marked)
  }

  /** Tests and benches: called with each published screen and its version. */
  onPublished(listener: (screenId: string, version: number) => void): void {
    this.publishedListeners.push(listener)
  }

  /** Resolves when everything marked so far is published. */
  async idle(): Promise<void> {
    while (this.loading.size) await Promise.all(this.loading)
    if (this.scheduled || this.pending.size) await this.markDirty('', [])
    await this.chain
  }

  private flush(): void {
    this.scheduled = false
    if (this.running) return // the running loop takes them when its batch is done
    this.running = true
    // One batch at a time, so a screen's versions go out in order. Each batch is everything
    // marked while the previous one was published: a stream of small marks (devices
    // subscribing after a restart, one tick's worth at a time) becomes a few large batches.
    this.chain = (async () => {
      while (this.pending.size || this.waiters.length) {
        const batch = this.pending
        const waiters = this.waiters
        this.pending = new Map()
        this.waiters = []
        const end = batch.size ? this.window.begin() : () => undefined
        try {
          await this.publishBatch(batch)
          for (const w of waiters) w.resolve()
        } catch (err) {
          this.log.error({ err }, 'publishing desired states failed')
          for (const w of waiters) w.reject(err)
        } finally {
          end()
        }
      }
      this.running = false
    })()
  }

  private async publishBatch(batch: Map<string, string>): Promise<void> {
    const byWorkspace = new Map<string, string[]>()
    for (const [screenId, ws] of batch) {
      if (!ws) continue
      const list = byWorkspace.get(ws) ?? []
      list.push(screenId)
      byWorkspace.set(ws, list)
    }
    const chunks: [string, string[]][] = []
    for (const [ws, ids] of byWorkspace) for (let i = 0; i < ids.length; i += CHUNK) chunks.push([ws, ids.slice(i, i + CHUNK)])
    // The next chunk is versioned and built while the broker takes this one (each screen is
    // in one chunk of a batch, so its versions still reach the broker in order).
    let next = chunks.length ? this.prepare(...chunks[0]!) : null
    // Delivery records are written behind the publishing, not before the next chunk goes out
    // (each screen's first published version is what they keep, so their order does not matter).
    let recording: Promise<void> = Promise.resolve()
    for (let i = 0; next; i++) {
      const states = await next
      next = i + 1 < chunks.length ? this.prepare(...chunks[i + 1]!) : null
      next?.catch(() => undefined) // awaited on the next turn; a failure here must not go unhandled meanwhile
      await Promise.all(
        [...states.values()].map(async (state) => {
          await this.broker.publish(topics.desired(state.screenId), encodeMessage(state), true)
          for (const l of this.publishedListeners) l(state.screenId, state.version)
        }),
      )
      recording = recording.then(() => this.recordDelivery(states))
      recording.catch(() => undefined) // awaited below; a failure must not go unhandled meanwhile
    }
    await recording
  }

  /** Takes the chunk's next versions (one transaction) and builds its states. */
  private async prepare(workspaceId: string, screenIds: string[]): Promise<Map<string, DesiredState>> {
    const publishedAt = this.clock ? this.clock.now().toISOString() : null
    const versions = await this.db.transaction((tx) => this.screens.bumpDesiredVersions(workspaceId, screenIds, publishedAt, tx.kysely))
    return this.builder.buildMany(workspaceId, screenIds, new Map(versions))
  }

  /** The casts and emergencies these states carry are now published to their screens. */
  private async recordDelivery(states: Map<string, DesiredState>): Promise<void> {
    const casts = new Map<string, string[]>()
    const emergencies = new Map<string, string[]>()
    const add = (m: Map<string, string[]>, id: string, screenId: string) => {
      const list = m.get(id)
      if (list) list.push(screenId)
      else m.set(id, [screenId])
    }
    for (const s of states.values()) {
      for (const c of s.casts) add(casts, c.id, s.screenId)
      if (s.emergency) add(emergencies, s.emergency.id, s.screenId)
    }
    if (!casts.size && !emergencies.size) return
    await this.db.transaction(async (tx) => {
      const castRepo = new CastRepository(tx.kysely)
      const emergencyRepo = new EmergencyRepository(tx.kysely)
      for (const [id, screenIds] of casts) await castRepo.markPublished(id, screenIds)
      for (const [id, screenIds] of emergencies) await emergencyRepo.markPublished(id, screenIds)
    })
  }
}
