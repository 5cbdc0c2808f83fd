// Publishes desired states: retained, QoS 1, on svc/v1/screens/<id>/desired, each with
// the screen's next version (screens.desired_version, bumped in the database, so it keeps
// increasing across restarts and processes). markDirty() coalesces bursts: every screen
// marked before the next tick is published once, with everything that changed.
//
// Screens go out in chunks: per chunk one statement takes the next versions, the builder
// builds the whole chunk with a few queries, every state is handed to the broker at once,
// and the casts and emergencies the states carry are recorded as published to those
// screens (their `delivery.published`). Chunks and batches run one after the other, so a
// screen's versions reach the broker in increasing order.
//
// A chunk waits until the broker has taken each of its states (stored it as retained, queued
// it for an offline session, handed it to the live subscriber's delivery), not until every
// device's write has finished: a device that stopped reading holds its write until its socket
// drains or the broker's drain timeout (60 s) cuts it, and it must not hold the fan-out. A
// screen has at most one publish the broker is still writing; a newer state for it meanwhile
// waits here (only the newest: one state per slow screen) and is handed over once that write
// has finished, so no device ever gets an older version after a newer one. A state is
// recorded as published (delivery.published) when the broker takes it, not before.
import type { EmbeddedBroker } from '../../platform/broker/EmbeddedBroker.js'
import { encodeMessage, topics, type DesiredState } from '@svc/shared/mqtt/index'
import type { DesiredStateBuilder } from './DesiredStateBuilder.js'
import type { ScreenRecords } from '../screens/index.js'
import type { TakeoverRecords } from '../takeovers/index.js'
import { FanOutWindow } from './FanOutWindow.js'

// The first chunk is small, so the first screens get their state after a short build; the
// rest go in larger chunks (fewer statements per screen) built while the previous one goes out.
const FIRST_CHUNK = 250
const CHUNK = 1000
// A batch this large (a takeover of a fleet, not a few screens reconnecting) holds what the
// devices send until its last chunk is handed over (EmbeddedBroker.holdReads).
const HOLD_READS_FROM = 1000

export class DesiredStatePublisher {
  private pending = new Map<string, string>() // screenId → workspaceId
  private waiters: { resolve(): void; reject(e: unknown): void }[] = []
  private scheduled = false
  /** Screen readers (markDirty with a function) not yet run. */
  private readonly loading = new Set<Promise<void>>()
  /** A batch is being published; marks made meanwhile wait for the next one. */
  private running = false
  private chain: Promise<void> = Promise.resolve()
  /** Desired states the broker has taken from this instance (the metrics; a bare increment on the fan-out's path). */
  published = 0
  private readonly publishedListeners: ((screenId: string, version: number) => void)[] = []
  /** Screens whose last publish the broker is still writing (a slow receiver): settles when it has finished. */
  private readonly inFlight = new Map<string, Promise<void>>()
  /** The newest state of such a screen, handed over once that publish has finished. */
  private readonly behind = new Map<string, DesiredState>()
  /** Hand-overs of states that waited behind a slow receiver, until the broker takes them and they are recorded. */
  private readonly catchingUp = new Set<Promise<void>>()
  /** Open while a batch is out: background writes (reports, `applied`) wait for it to close. */
  readonly window = new FanOutWindow()

  constructor(
    private readonly screens: Pick<ScreenRecords, 'bumpDesiredVersions'>,
    private readonly takeovers: Pick<TakeoverRecords, 'published'>,
    private readonly builder: DesiredStateBuilder,
    private readonly broker: Pick<EmbeddedBroker, 'publish'> & Partial<Pick<EmbeddedBroker, 'closed' | 'holdReads'>>,
    private readonly log: { error(obj: unknown, msg: string): void },
    /** When set, each publish records `screens.desired_published_at` (signed URLs are refreshed from it). */
    private readonly clock: { now(): Date } | null = null,
  ) {}

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

  /** Tests and benches: called with each published screen and its version, when the broker takes it. */
  onPublished(listener: (screenId: string, version: number) => void): void {
    this.publishedListeners.push(listener)
  }

  /**
   * Resolves when everything marked so far is published, states waiting behind a slow
   * receiver included (up to the broker's drain timeout). `behindSlowReceivers: false` (the
   * shutdown) leaves those: the database holds them and a reconnecting device gets its latest.
   */
  async idle(opts: { behindSlowReceivers?: boolean } = {}): Promise<void> {
    while (this.loading.size) await Promise.all(this.loading)
    if (this.scheduled || this.pending.size) await this.markDirty('', [])
    await this.chain
    if (opts.behindSlowReceivers === false) return
    while (this.behind.size || this.catchingUp.size) {
      const waits = [...this.catchingUp]
      for (const id of this.behind.keys()) {
        const w = this.inFlight.get(id)
        if (w) waits.push(w)
      }
      await (waits.length ? Promise.all(waits) : new Promise((r) => setImmediate(r)))
    }
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
    for (const [ws, ids] of byWorkspace)
      for (let i = 0; i < ids.length; ) {
        const size = chunks.length ? CHUNK : FIRST_CHUNK
        chunks.push([ws, ids.slice(i, i + size)])
        i += size
      }
    // The next chunk is versioned and built while the broker takes this one (each screen is
    // in one chunk of a batch, so its versions still reach the broker in order).
    let next = chunks.length ? this.prepare(...chunks[0]!) : null
    // Delivery records are written once the whole batch is handed over, in one transaction:
    // written between chunks they would hold the database connection the next chunk's
    // versions and build wait for (each screen's first published version is what they keep,
    // so when they are written does not change them).
    const handed = new Map<string, DesiredState>()
    const endHold = batch.size >= HOLD_READS_FROM && this.broker.holdReads ? this.broker.holdReads() : null
    try {
      for (let i = 0; next; i++) {
        const states = await next
        next = i + 1 < chunks.length ? this.prepare(...chunks[i + 1]!) : null
        next?.catch(() => undefined) // awaited on the next turn; a failure here must not go unhandled meanwhile
        await Promise.all([...states.values()].map((state) => this.handOver(state).then((ok) => ok && handed.set(state.screenId, state))))
        // The broker writes each delivery on a later turn (setImmediate): let it write this
        // chunk before the next chunk is handed over.
        await new Promise((r) => setImmediate(r))
      }
    } finally {
      endHold?.()
    }
    await this.recordDelivery(handed)
  }

  /**
   * Hands a state to the broker: true once the broker has taken it, false when the screen's
   * previous publish is still being written (then it waits in `behind`, replacing an older one).
   */
  private handOver(state: DesiredState): Promise<boolean> {
    const id = state.screenId
    if (this.inFlight.has(id)) {
      this.behind.set(id, state)
      return Promise.resolve(false)
    }
    // Per state on the fan-out's path: inline callbacks only (a named closure costs a
    // keepNames wrapper per call under tsx), one promise for the hand-over, one for the end.
    return new Promise<boolean>((resolve, reject) => {
      let handed = false
      const settled = this.broker
        .publish(topics.desired(id), encodeMessage(state), true, () => {
          handed = true
          this.taken(id, state.version)
          resolve(true)
        })
        .then(
          () => {
            try {
              if (!handed) {
                handed = true // a broker that does not report the hand-over: taken when done
                this.taken(id, state.version)
                resolve(true)
              }
            } finally {
              this.settle(id)
            }
          },
          (err: unknown) => {
            if (!handed) reject(err)
            else this.log.error({ err, screenId: id, version: state.version }, 'a desired state the broker took failed to reach its subscriber')
            this.settle(id)
          },
        )
      this.inFlight.set(id, settled)
    })
  }

  private taken(screenId: string, version: number): void {
    this.published++
    for (const l of this.publishedListeners) l(screenId, version)
  }

  /** The screen's publish has finished (written, or its connection closed). */
  private settle(screenId: string): void {
    this.inFlight.delete(screenId)
    this.catchUp(screenId)
  }

  /** The screen's previous publish has finished: hand over the newest state that waited behind it. */
  private catchUp(screenId: string): void {
    const state = this.behind.get(screenId)
    if (!state) return
    this.behind.delete(screenId)
    if (this.broker.closed) return // shutting down: the database holds it, a reconnecting device gets it
    const p: Promise<void> = this.handOver(state)
      .then((handed) => (handed ? this.recordDelivery(new Map([[screenId, state]])) : undefined))
      .catch((err) => this.log.error({ err, screenId }, 'publishing a desired state that waited behind a slow receiver failed'))
      .finally(() => this.catchingUp.delete(p))
    this.catchingUp.add(p)
  }

  /** Takes the chunk's next versions (one UPDATE … RETURNING, atomic on its own) and builds its states. */
  private async prepare(workspaceId: string, screenIds: string[]): Promise<Map<string, DesiredState>> {
    const publishedAt = this.clock ? this.clock.now().toISOString() : null
    const versions = await this.screens.bumpDesiredVersions(workspaceId, screenIds, publishedAt)
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
    await this.takeovers.published(casts, emergencies, this.clock ? this.clock.now().toISOString() : null)
  }
}
