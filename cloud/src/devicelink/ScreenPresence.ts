// Screen presence and reported state, from the device link: the broker's client events
// (ready / disconnect), the device's `status` topic (its own `online`, its Last Will
// `offline`) and its `reported` topic. Updates screens.status / last_seen_at / reported,
// and announces debounced transitions as `screen.online` / `screen.offline` on the event
// bus and to onScreenStatus listeners (alerts subscribe here).
//
// Debounce: a screen that drops is `offline` only after `offlineAfterMs` (default 30 s,
// SVC_SCREEN_OFFLINE_GRACE_MS) without reconnecting; a reconnect inside that window is a
// flap and announces nothing. `online` is announced at once, but only after a confirmed
// `offline`. Time comes from the injected clock; sweep() confirms due offlines (a real
// timer calls it; tests call it after moving a ManualClock).
import type { Clock } from '../clock.js'
import type { Database } from '../db/Database.js'
import type { EmbeddedBroker } from '../broker/EmbeddedBroker.js'
import type { EventBus } from '../events/EventBus.js'
import { cloudFilters, parseReported, parseScreenTopic, parseStatusMessage, type Reported } from '@svc/shared/mqtt/index'

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

type Link = Pick<EmbeddedBroker, 'subscribe' | 'onClients' | 'isConnected'>

export class ScreenPresence {
  private readonly pendingOffline = new Map<string, { since: string; timer: NodeJS.Timeout | null }>()
  private readonly statusListeners: ((c: ScreenStatusChange) => void | Promise<void>)[] = []
  private readonly reportedListeners: ((r: ScreenReport) => void | Promise<void>)[] = []
  private chain: Promise<void> = Promise.resolve()
  private timersOn = false

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly broker: Link,
    private readonly events: EventBus,
    private readonly log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void },
    /** How long a dropped screen may stay away before it counts as offline. */
    readonly offlineAfterMs = 30_000,
  ) {}

  /** Subscribes to the device link. `timers`: arm a real timer per drop (off in tests). */
  async start(opts: { timers: boolean }): Promise<void> {
    this.timersOn = opts.timers
    this.broker.onClients({ ready: (id) => this.enqueue(() => this.connected(id)), gone: (id) => this.enqueue(() => this.dropped(id)) })
    await this.broker.subscribe(cloudFilters.allStatus, (m) => this.enqueue(() => this.onStatus(m.topic, m.payload)))
    await this.broker.subscribe(cloudFilters.allReported, (m) => this.enqueue(() => this.handleReported(m.topic, m.payload)))
    // Screens still marked online were connected to a previous process: they must
    // reconnect within the grace period or be announced offline.
    const online = await this.db.all<{ id: string }>("SELECT id FROM screens WHERE status = 'online'")
    const now = this.clock.now().toISOString()
    for (const r of online) if (!this.broker.isConnected(r.id)) this.markPending(r.id, now)
  }

  stop(): void {
    for (const p of this.pendingOffline.values()) if (p.timer) clearTimeout(p.timer)
    this.timersOn = false
  }

  /** Listens to debounced online/offline transitions. */
  onScreenStatus(listener: (c: ScreenStatusChange) => void | Promise<void>): () => void {
    this.statusListeners.push(listener)
    return () => this.statusListeners.splice(this.statusListeners.indexOf(listener) >>> 0, 1)
  }

  /** Listens to every valid `reported` message, after it is stored. */
  onReported(listener: (r: ScreenReport) => void | Promise<void>): () => void {
    this.reportedListeners.push(listener)
    return () => this.reportedListeners.splice(this.reportedListeners.indexOf(listener) >>> 0, 1)
  }

  /** Resolves when every message received so far is handled. */
  idle(): Promise<void> {
    return this.chain
  }

  /** Announces offline for every drop older than the grace period. */
  sweep(): Promise<void> {
    return this.enqueue(async () => {
      const now = this.clock.now()
      for (const [id, p] of [...this.pendingOffline]) {
        if (now.getTime() - Date.parse(p.since) < this.offlineAfterMs) continue
        this.pendingOffline.delete(id)
        if (p.timer) clearTimeout(p.timer)
        if (this.broker.isConnected(id)) continue
        const row = await this.screen(id)
        if (!row || row.status === 'offline') continue
        await this.db.run("UPDATE screens SET status = 'offline', status_since = ? WHERE id = ?", [p.since, id])
        await this.announce(id, row, 'offline', now.toISOString(), p.since)
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

  private async connected(id: string): Promise<void> {
    const p = this.pendingOffline.get(id)
    if (p?.timer) clearTimeout(p.timer)
    this.pendingOffline.delete(id)
    const row = await this.screen(id)
    if (!row) return
    const now = this.clock.now().toISOString()
    if (row.status === 'online') {
      await this.db.run('UPDATE screens SET last_seen_at = ? WHERE id = ?', [now, id])
      return
    }
    await this.db.run("UPDATE screens SET status = 'online', status_since = ?, last_seen_at = ? WHERE id = ?", [now, now, id])
    await this.announce(id, row, 'online', now, row.status_since)
  }

  private async dropped(id: string): Promise<void> {
    if (this.broker.isConnected(id) || this.pendingOffline.has(id)) return
    const row = await this.screen(id)
    if (!row) return
    const now = this.clock.now().toISOString()
    await this.db.run('UPDATE screens SET last_seen_at = ? WHERE id = ?', [now, id])
    if (row.status === 'online') this.markPending(id, now)
  }

  private markPending(id: string, since: string): void {
    const timer = this.timersOn ? setTimeout(() => void this.sweep(), this.offlineAfterMs + 50) : null
    timer?.unref()
    this.pendingOffline.set(id, { since, timer })
  }

  private async onStatus(topic: string, payload: Buffer): Promise<void> {
    const t = parseScreenTopic(topic)
    if (!t) return
    const msg = parseStatusMessage(payload)
    if (!msg.ok) {
      this.log.warn({ screenId: t.screenId, errors: msg.errors }, 'invalid status message ignored')
      return
    }
    // The connection is the truth: an `online` from a client that is gone, or an
    // `offline` (a Last Will) while the screen is connected again, is stale.
    if (msg.value.status === 'online') {
      if (this.broker.isConnected(t.screenId)) await this.connected(t.screenId)
    } else await this.dropped(t.screenId)
  }

  private async handleReported(topic: string, payload: Buffer): Promise<void> {
    const t = parseScreenTopic(topic)
    if (!t) return
    const msg = parseReported(payload)
    if (!msg.ok) {
      this.log.warn({ screenId: t.screenId, errors: msg.errors }, 'invalid reported message ignored')
      return
    }
    const row = await this.screen(t.screenId)
    if (!row) return
    const now = this.clock.now().toISOString()
    await this.db.run('UPDATE screens SET reported = ?, reported_at = ?, last_seen_at = ? WHERE id = ?', [JSON.stringify(msg.value), now, now, t.screenId])
    for (const l of [...this.reportedListeners]) {
      try {
        await l({ workspaceId: row.workspace_id, screenId: t.screenId, nodeId: row.node_id, reported: msg.value, at: now })
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
