// Screen presence and reported state, from the device link. Presence follows the broker's
// record of live connections (broker/LiveConnections.ts): a screen is online exactly while
// its device holds an authenticated connection. Each connection has a generation; the
// screen's live generations are kept in a PresenceStore, so a late or out-of-order event for
// one connection cannot hide another, and a take-over by the same client id (new one opens,
// old one closes) is just a connection set that never went empty for long.
//
// Debounce: a screen whose last connection closes is `offline` only after `offlineAfterMs`
// (default 30 s, SVC_SCREEN_OFFLINE_GRACE_MS) without a new one; a reconnect inside that
// window is a flap and announces nothing. `online` is announced at once, but only after a
// confirmed `offline` (or for a new screen's first connection). Transitions are conditional
// updates of screens.status, so `screen.online` / `screen.offline` alternate per screen
// even if several handlers race. Time comes from the injected clock; sweep() confirms due
// offlines (a real timer calls it; tests call it after moving a ManualClock).
//
// The device's `status` topic (its `online`, its Last Will `offline`) is validated but does
// not move presence: the connection is the truth. `reported` messages are coalesced per
// screen (ReportedCoalescer) and written outside the presence queue.
import { randomBytes } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { Database } from '../db/Database.js'
import type { EmbeddedBroker } from '../broker/EmbeddedBroker.js'
import type { EventBus } from '../events/EventBus.js'
import { cloudFilters, parseReported, parseScreenTopic, parseStatusMessage, type Reported } from '@svc/shared/mqtt/index'
import { InMemoryPresenceStore, type PresenceStore } from './PresenceStore.js'
import { ReportedCoalescer } from './ReportedCoalescer.js'

export interface ScreenStatusChange {
  workspaceId: string
  screenId: string
  screenName: string
  nodeId: string | null
  status: 'online' | 'offline'
  /** When the change was announced. */
  at: string
  /** offline: when the screen dropped; online: when the outage began (null if unknown). */
  since: string | null
}

export interface ScreenReport {
  workspaceId: string
  screenId: string
  nodeId: string | null
  reported: Reported
  at: string
}

interface ScreenRow {
  workspace_id: string
  name: string
  node_id: string | null
  status: string
  status_since: string | null
}

type Link = Pick<EmbeddedBroker, 'subscribe' | 'onConnections' | 'isConnected'>

export class ScreenPresence {
  private readonly timers = new Map<string, NodeJS.Timeout>()
  private readonly statusListeners: ((c: ScreenStatusChange) => void | Promise<void>)[] = []
  private readonly reportedListeners: ((r: ScreenReport) => void | Promise<void>)[] = []
  private chain: Promise<void> = Promise.resolve()
  private timersOn = false
  /** This process among the instances sharing the store. */
  readonly instance = randomBytes(6).toString('hex')
  private readonly reported: ReportedCoalescer<{ payload: Buffer; at: string }>

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly broker: Link,
    private readonly events: EventBus,
    private readonly log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void },
    /** How long a dropped screen may stay away before it counts as offline. */
    readonly offlineAfterMs = 30_000,
    private readonly store: PresenceStore = new InMemoryPresenceStore(),
    /** At most one `reported` write per screen per this many ms. */
    reportedIntervalMs = 250,
  ) {
    this.reported = new ReportedCoalescer(
      (id, m) => this.storeReported(id, m.payload, m.at).catch((err) => this.log.error({ err }, 'storing reported state failed')),
      reportedIntervalMs,
    )
  }

  /** Subscribes to the device link. `timers`: arm a real timer per drop (off in tests). */
  async start(opts: { timers: boolean }): Promise<void> {
    this.timersOn = opts.timers
    await this.store.forgetInstance(this.instance)
    this.broker.onConnections({
      open: (c) => void this.enqueue(() => this.opened(c.clientId, `${this.instance}/${c.generation}`)),
      close: (c) => void this.enqueue(() => this.closed(c.clientId, `${this.instance}/${c.generation}`)),
    })
    await this.broker.subscribe(cloudFilters.allStatus, (m) => this.onStatus(m.topic, m.payload))
    await this.broker.subscribe(cloudFilters.allReported, (m) => this.onReportedMessage(m.topic, m.payload))
    // Screens still marked online were connected to a previous process: they must
    // reconnect within the grace period or be announced offline.
    await this.enqueue(async () => {
      const online = await this.db.all<{ id: string }>("SELECT id FROM screens WHERE status = 'online'")
      const now = this.clock.now().getTime()
      for (const r of online) if (!(await this.store.isLive(r.id))) await this.markAway(r.id, now)
    })
  }

  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t)
    this.timers.clear()
    this.timersOn = false
  }

  /** Listens to debounced online/offline transitions. */
  onScreenStatus(listener: (c: ScreenStatusChange) => void | Promise<void>): () => void {
    this.statusListeners.push(listener)
    return () => this.statusListeners.splice(this.statusListeners.indexOf(listener) >>> 0, 1)
  }

  /** Listens to the `reported` state each time it is stored (the latest of a burst). */
  onReported(listener: (r: ScreenReport) => void | Promise<void>): () => void {
    this.reportedListeners.push(listener)
    return () => this.reportedListeners.splice(this.reportedListeners.indexOf(listener) >>> 0, 1)
  }

  /** Resolves when every event and message received so far is handled. */
  async idle(): Promise<void> {
    for (;;) {
      const chain = this.chain
      await chain
      await this.reported.idle()
      if (chain === this.chain) return
    }
  }

  /** Writes pending `reported` state now instead of at its turn (shutdown, tests). */
  flushReported(): Promise<void> {
    return this.reported.flushAll()
  }

  /** Announces offline for every drop older than the grace period. */
  sweep(): Promise<void> {
    return this.enqueue(async () => {
      const now = this.clock.now()
      for (const { screenId, since } of await this.store.awayBefore(now.getTime() - this.offlineAfterMs)) {
        await this.store.clearAway(screenId)
        this.disarm(screenId)
        if (await this.store.isLive(screenId)) continue
        const row = await this.screen(screenId)
        if (row?.status !== 'online') continue
        const sinceIso = new Date(since).toISOString()
        const r = await this.db.run("UPDATE screens SET status = 'offline', status_since = ? WHERE id = ? AND status = 'online'", [sinceIso, screenId])
        if (r.changes === 1) await this.announce(screenId, row, 'offline', now.toISOString(), sinceIso)
      }
    })
  }

  private enqueue(fn: () => Promise<void>): Promise<void> {
    const next = this.chain.then(fn).catch((err) => this.log.error({ err }, 'device link handler failed'))
    this.chain = next
    return next
  }

  private screen(id: string): Promise<ScreenRow | undefined> {
    return this.db.get<ScreenRow>('SELECT workspace_id, name, node_id, status, status_since FROM screens WHERE id = ?', [id])
  }

  private async opened(id: string, key: string): Promise<void> {
    await this.store.open(id, key)
    await this.store.clearAway(id)
    this.disarm(id)
    const row = await this.screen(id)
    if (!row) return
    const now = this.clock.now().toISOString()
    if (row.status === 'online') {
      await this.db.run('UPDATE screens SET last_seen_at = ? WHERE id = ?', [now, id])
      return
    }
    const r = await this.db.run("UPDATE screens SET status = 'online', status_since = ?, last_seen_at = ? WHERE id = ? AND status <> 'online'", [now, now, id])
    if (r.changes === 1) await this.announce(id, row, 'online', now, row.status_since)
  }

  private async closed(id: string, key: string): Promise<void> {
    const stillLive = await this.store.close(id, key)
    const row = await this.screen(id)
    if (!row) return
    const now = this.clock.now()
    // The last moment the screen was known connected.
    await this.db.run('UPDATE screens SET last_seen_at = ? WHERE id = ?', [now.toISOString(), id])
    if (!stillLive && row.status === 'online') await this.markAway(id, now.getTime())
  }

  private async markAway(id: string, since: number): Promise<void> {
    await this.store.markAway(id, since)
    if (!this.timersOn || this.timers.has(id)) return
    const timer = setTimeout(() => {
      this.timers.delete(id)
      void this.sweep()
    }, this.offlineAfterMs + 50)
    timer.unref()
    this.timers.set(id, timer)
  }

  private disarm(id: string): void {
    const t = this.timers.get(id)
    if (t) clearTimeout(t)
    this.timers.delete(id)
  }

  private onStatus(topic: string, payload: Buffer): void {
    const t = parseScreenTopic(topic)
    if (!t) return
    const msg = parseStatusMessage(payload)
    // Validated for the log only: presence follows the connection, not what it says.
    if (!msg.ok) this.log.warn({ screenId: t.screenId, errors: msg.errors }, 'invalid status message ignored')
  }

  private onReportedMessage(topic: string, payload: Buffer): void {
    const t = parseScreenTopic(topic)
    if (!t) return
    this.reported.offer(t.screenId, { payload, at: this.clock.now().toISOString() })
  }

  private async storeReported(screenId: string, payload: Buffer, at: string): Promise<void> {
    const msg = parseReported(payload)
    if (!msg.ok) {
      this.log.warn({ screenId, errors: msg.errors }, 'invalid reported message ignored')
      return
    }
    const row = await this.screen(screenId)
    if (!row) return
    await this.db.run('UPDATE screens SET reported = ?, reported_at = ?, last_seen_at = ? WHERE id = ?', [JSON.stringify(msg.value), at, at, screenId])
    for (const l of [...this.reportedListeners]) {
      try {
        await l({ workspaceId: row.workspace_id, screenId, nodeId: row.node_id, reported: msg.value, at })
      } catch (err) {
        this.log.error({ err }, 'reported listener failed')
      }
    }
  }

  private async announce(id: string, row: ScreenRow, status: 'online' | 'offline', at: string, since: string | null): Promise<void> {
    const change: ScreenStatusChange = { workspaceId: row.workspace_id, screenId: id, screenName: row.name, nodeId: row.node_id, status, at, since }
    await this.events.publish({
      event: status === 'online' ? 'screen.online' : 'screen.offline',
      workspaceId: row.workspace_id,
      occurredAt: at,
      data: { screenId: id, screenName: row.name, nodeId: row.node_id, at, ...(since ? { since } : {}) },
    })
    for (const l of [...this.statusListeners]) {
      try {
        await l(change)
      } catch (err) {
        this.log.error({ err }, 'screen status listener failed')
      }
    }
  }
}
