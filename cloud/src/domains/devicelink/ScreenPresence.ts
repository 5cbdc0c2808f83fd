// Screen presence and reported state, from the device link. Presence follows the broker's
// record of live connections (platform/broker/LiveConnections.ts): a screen is online exactly while
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
// screen (ReportedCoalescer) and written outside the presence queue. When a report changes
// what an operator watches (what plays, the panel's power and input, the agent's version),
// `screen.reported` is recorded with those facts, so the console follows without reloading;
// the facts last seen per screen are kept here (the stored report is read only for a screen
// not seen since this process started), so a report that changes nothing costs nothing more.
//
// Announcements go through the event outbox (domains/events/EventOutbox.ts): a status change and
// its `screen.online` / `screen.offline` row commit in one transaction, so a crash between
// the write and the webhook loses nothing; the outbox's dispatch makes the webhook
// deliveries and then publishes the events on the bus, where onScreenStatus listeners hear
// them one by one and onScreenStatuses listeners (alert evaluation) a dispatch run at a
// time, in order, in whichever process dispatched them.
//
// Cost at fleet size: connection events queue up and are handled in batches (a run of
// opens is one read and one transaction of at most two updates plus one multi-row outbox
// insert, whatever its length; a run of closes one read and one update; a sweep of due
// offlines one read and a transaction per 500 screens; see ScreenPresenceRepository), and
// the dispatch runs on its
// own queue, so a connect storm's presence writes never wait for webhooks or alerts.
import { randomBytes } from 'node:crypto'
import type { Clock } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import type { DomainEvent } from '../events/index.js'
import type { ScreenReport } from '../screens/index.js'
import type { EventOutbox } from '../events/index.js'
import { ScreenPresenceRepository, type PresenceRow } from './ScreenPresenceRepository.js'
import type { EmbeddedBroker } from '../../platform/broker/EmbeddedBroker.js'
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

type ScreenRow = PresenceRow

/** Screens announced offline per sweep transaction. */
const SWEEP_BATCH = 500

/** What `screen.reported` carries: the facts of a report the console shows. */
export interface ReportedFacts {
  playing: { source: string; contentKind: string | null; contentId: string | null; castId: string | null; emergencyId: string | null }
  panel: { power: string; input: string | null } | null
  agentVersion: string | null
}

export function factsOf(r: Reported): ReportedFacts {
  const p = r.playing
  return {
    playing: { source: p.source, contentKind: p.contentKind, contentId: p.contentId, castId: p.castId ?? null, emergencyId: p.emergencyId ?? null },
    panel: r.panel ? { power: r.panel.power, input: r.panel.input ?? null } : null,
    agentVersion: r.agentVersion ?? null,
  }
}

/** A connection event waiting for its turn. */
interface ConnEvent {
  open: boolean
  id: string
  key: string
}

type Link = Pick<EmbeddedBroker, 'subscribe' | 'onConnections' | 'isConnected'>

export class ScreenPresence {
  private readonly timers = new Map<string, NodeJS.Timeout>()
  /** Screens online when this process started and not yet back: when they were last known connected (ms). */
  private readonly droppedBeforeStart = new Map<string, number>()
  private readonly statusListeners: ((c: ScreenStatusChange[]) => void | Promise<void>)[] = []
  private readonly reportedListeners: ((r: ScreenReport) => void | Promise<void>)[] = []
  private chain: Promise<void> = Promise.resolve()
  /** Outbox dispatches after status changes commit, outside the presence queue. */
  private announcing: Promise<void> = Promise.resolve()
  private listening: (() => void) | null = null
  private pendingConns: ConnEvent[] = []
  private readonly repo: ScreenPresenceRepository
  private timersOn = false
  /** This process among the instances sharing the store. */
  readonly instance = randomBytes(6).toString('hex')
  private readonly reported: ReportedCoalescer<{ payload: Buffer; at: string }>
  /** Reports the coalescer let through this tick, written together (writeReports). */
  private dueReports: { screenId: string; payload: Buffer; at: string; done: () => void }[] = []
  /** The facts of each screen's last report seen here (JSON of ReportedFacts). */
  private readonly lastFacts = new Map<string, string>()
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly broker: Link,
    /** Where status changes record their events (and whose bus feeds onScreenStatus). */
    private readonly outbox: EventOutbox,
    private readonly log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void },
    /** How long a dropped screen may stay away before it counts as offline. */
    readonly offlineAfterMs = 30_000,
    private readonly store: PresenceStore = new InMemoryPresenceStore(),
    /** At most one `reported` write per screen per this many ms. */
    reportedIntervalMs = 250,
    /** Report writes wait for it (the publisher's FanOutWindow: a fan-out's reads and version bumps go first). */
    private readonly writeGate: { clear(): Promise<void> } | null = null,
  ) {
    this.repo = new ScreenPresenceRepository(db.kysely)
    this.reported = new ReportedCoalescer((id, m) => this.storeReported(id, m.payload, m.at), reportedIntervalMs)
  }

  /** Subscribes to the device link. `timers`: arm a real timer per drop (off in tests). */
  async start(opts: { timers: boolean }): Promise<void> {
    this.timersOn = opts.timers
    await this.store.forgetInstance(this.instance)
    this.broker.onConnections({
      open: (c) => this.connEvent({ open: true, id: c.clientId, key: `${this.instance}/${c.generation}` }),
      close: (c) => this.connEvent({ open: false, id: c.clientId, key: `${this.instance}/${c.generation}` }),
    })
    await this.broker.subscribe(cloudFilters.allStatus, (m) => this.onStatus(m.topic, m.payload))
    await this.broker.subscribe(cloudFilters.allReported, (m) => this.onReportedMessage(m.topic, m.payload))
    // Screens still marked online were connected to a previous process: they must
    // reconnect within the grace period or be announced offline, as offline from the last
    // moment they were known connected (their last report, or the drop the previous process
    // recorded as it stopped), not from this start.
    await this.enqueue(async () => {
      const now = this.clock.now().getTime()
      for (const { id, last_seen_at } of await this.repo.online()) {
        if (await this.store.isLive(id)) continue
        const seen = last_seen_at ? Date.parse(last_seen_at) : Number.NaN
        if (Number.isFinite(seen) && seen < now) this.droppedBeforeStart.set(id, seen)
        await this.markAway(id, now)
      }
    })
  }

  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t)
    this.timers.clear()
    this.timersOn = false
  }

  /**
   * Listens to debounced online/offline transitions, as the outbox dispatches their events
   * (in this process, for every screen whose event this process dispatched).
   */
  onScreenStatus(listener: (c: ScreenStatusChange) => void | Promise<void>): () => void {
    return this.onScreenStatuses(async (changes) => {
      for (const c of changes) {
        try {
          await listener(c)
        } catch (err) {
          this.log.error({ err }, 'screen status listener failed')
        }
      }
    })
  }

  /**
   * The same transitions a dispatch run at a time, in order (a screen may appear more than
   * once): for listeners that read and write a batch of screens at once (alert evaluation).
   */
  onScreenStatuses(listener: (changes: ScreenStatusChange[]) => void | Promise<void>): () => void {
    this.statusListeners.push(listener)
    this.listening ??= this.outbox.bus.subscribeBatch((events) => this.heard(events))
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
      const announcing = this.announcing
      await chain
      await announcing
      await this.reported.idle()
      if (chain === this.chain && announcing === this.announcing && this.pendingConns.length === 0) return
    }
  }

  /** Writes pending `reported` state now instead of at its turn (shutdown, tests). */
  flushReported(): Promise<void> {
    return this.reported.flushAll()
  }

  /**
   * Announces offline for every drop older than the grace period; resolves once those events
   * are dispatched. The due screens are read at once and their status changes and
   * `screen.offline` events written in one transaction per SWEEP_BATCH screens (a network
   * cut that dropped a thousand screens is a few statements, not a transaction per screen).
   */
  async sweep(): Promise<void> {
    await this.enqueue(async () => {
      const now = this.clock.now()
      const due: { screenId: string; since: number }[] = []
      for (const d of await this.store.awayBefore(now.getTime() - this.offlineAfterMs)) {
        await this.store.clearAway(d.screenId)
        this.disarm(d.screenId)
        if (!(await this.store.isLive(d.screenId))) due.push(d)
      }
      if (!due.length) return
      const rows = await this.repo.rows(due.map((d) => d.screenId))
      const offline: { id: string; since: string; row: ScreenRow }[] = []
      for (const { screenId, since } of due) {
        const row = rows.get(screenId)
        if (row?.status !== 'online') continue
        const dropped = this.droppedBeforeStart.get(screenId)
        this.droppedBeforeStart.delete(screenId)
        offline.push({ id: screenId, since: new Date(dropped !== undefined && dropped < since ? dropped : since).toISOString(), row })
      }
      const at = now.toISOString()
      let changes = 0
      for (let i = 0; i < offline.length; i += SWEEP_BATCH) {
        const part = offline.slice(i, i + SWEEP_BATCH)
        try {
          // The status changes and their events commit together.
          changes += await this.db.transaction(async (tx) => {
            const changed = await new ScreenPresenceRepository(tx.kysely).markOfflineMany(part)
            await this.outbox.recordMany(
              tx,
              part.filter((o) => changed.has(o.id)).map((o) => statusEvent(o.id, o.row, 'offline', at, o.since)),
            )
            return changed.size
          })
        } catch (err) {
          // Rolled back: still away, so the next sweep announces them (unless they came back).
          for (const o of part) if (!(await this.store.isLive(o.id))) await this.markAway(o.id, Date.parse(o.since))
          this.log.error({ err, screens: part.length }, 'announcing screens offline failed; retried on the next sweep')
        }
      }
      if (changes) this.relay()
    })
    await this.announcing
  }

  private enqueue(fn: () => Promise<void>): Promise<void> {
    const next = this.chain.then(fn).catch((err) => this.log.error({ err }, 'device link handler failed'))
    this.chain = next
    return next
  }

  /** Queues a connection event; one drain handles everything queued by its turn. */
  private connEvent(e: ConnEvent): void {
    this.pendingConns.push(e)
    if (this.pendingConns.length === 1) void this.enqueue(() => this.drainConns())
  }

  private async drainConns(): Promise<void> {
    const events = this.pendingConns
    this.pendingConns = []
    for (let i = 0; i < events.length; ) {
      // A run of opens or of closes, each screen once (a second event of the same screen starts the next run).
      const open = events[i]!.open
      const run: ConnEvent[] = []
      const ids = new Set<string>()
      for (; i < events.length && events[i]!.open === open && !ids.has(events[i]!.id); i++) {
        run.push(events[i]!)
        ids.add(events[i]!.id)
      }
      await (open ? this.opened(run) : this.closed(run))
    }
  }

  private async opened(run: ConnEvent[]): Promise<void> {
    for (const { id, key } of run) {
      this.droppedBeforeStart.delete(id)
      await this.store.open(id, key)
      await this.store.clearAway(id)
      this.disarm(id)
    }
    const rows = await this.repo.rows(run.map((e) => e.id))
    const now = this.clock.now().toISOString()
    const online: string[] = []
    const other: string[] = []
    for (const { id } of run) {
      const row = rows.get(id)
      if (row) (row.status === 'online' ? online : other).push(id)
    }
    if (!other.length) {
      if (online.length) await this.repo.touch(online, now)
      return
    }
    // The status changes and their events commit together.
    const changed = await this.db.transaction(async (tx) => {
      const repo = new ScreenPresenceRepository(tx.kysely)
      if (online.length) await repo.touch(online, now)
      const changed = await repo.markOnline(other, now)
      await this.outbox.recordMany(
        tx,
        other.filter((id) => changed.has(id)).map((id) => statusEvent(id, rows.get(id)!, 'online', now, rows.get(id)!.status_since)),
      )
      return changed.size
    })
    if (changed) this.relay()
  }

  /**
   * A run of closes (a broker closing with every device connected, a network cut): one read
   * of their rows and one `last_seen_at` write, whatever its length.
   */
  private async closed(run: ConnEvent[]): Promise<void> {
    const stillLive = new Map<string, boolean>()
    for (const { id, key } of run) stillLive.set(id, await this.store.close(id, key))
    const rows = await this.repo.rows(run.map((e) => e.id))
    if (!rows.size) return
    const now = this.clock.now()
    // The last moment these screens were known connected.
    await this.repo.touch([...rows.keys()], now.toISOString())
    for (const [id, row] of rows) if (!stillLive.get(id) && row.status === 'online') await this.markAway(id, now.getTime())
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

  /**
   * Queues a screen's (coalesced) report for the next write: every report due in the same
   * tick is written together (one read of their rows, transactions of 100), so a fleet
   * reporting at once (every screen applying a cast) costs a few statements per tick, not
   * two per screen.
   */
  private storeReported(screenId: string, payload: Buffer, at: string): Promise<void> {
    return new Promise((resolve) => {
      this.dueReports.push({ screenId, payload, at, done: resolve })
      if (this.dueReports.length === 1) setImmediate(() => void this.writeReports())
    })
  }

  private async writeReports(): Promise<void> {
    // Reports arriving meanwhile join this write (dueReports is taken after the wait).
    if (this.writeGate) await this.writeGate.clear().catch(() => undefined)
    const due = this.dueReports
    this.dueReports = []
    try {
      const valid: { screenId: string; reported: Reported; at: string }[] = []
      for (const d of due) {
        const msg = parseReported(d.payload)
        if (msg.ok) valid.push({ screenId: d.screenId, reported: msg.value, at: d.at })
        else this.log.warn({ screenId: d.screenId, errors: msg.errors }, 'invalid reported message ignored')
      }
      const rows = valid.length ? await this.repo.rows(valid.map((v) => v.screenId)) : new Map<string, ScreenRow>()
      const known = valid.filter((v) => rows.has(v.screenId))
      await this.primeFacts(known)
      await this.repo.storeReportedMany(
        known.map((v) => ({ id: v.screenId, reported: JSON.stringify(v.reported), at: v.at, agentVersion: v.reported.agentVersion ?? null })),
      )
      await this.announceFacts(known, rows)
      for (const v of known) {
        const row = rows.get(v.screenId)!
        for (const l of [...this.reportedListeners]) {
          try {
            await l({ workspaceId: row.workspace_id, screenId: v.screenId, nodeId: row.node_id, reported: v.reported, at: v.at })
          } catch (err) {
            this.log.error({ err }, 'reported listener failed')
          }
        }
      }
    } catch (err) {
      this.log.error({ err }, 'storing reported state failed')
    } finally {
      for (const d of due) d.done()
    }
  }

  /** Records `screen.reported` for the reports whose facts differ from the screen's previous report. */
  private async announceFacts(known: readonly { screenId: string; reported: Reported; at: string }[], rows: Map<string, ScreenRow>): Promise<void> {
    const events: DomainEvent[] = []
    for (const v of known) {
      const facts = factsOf(v.reported)
      const text = JSON.stringify(facts)
      if (this.lastFacts.get(v.screenId) === text) continue
      this.lastFacts.set(v.screenId, text)
      const row = rows.get(v.screenId)!
      events.push({
        event: 'screen.reported',
        workspaceId: row.workspace_id,
        occurredAt: v.at,
        data: { screenId: v.screenId, screenName: row.name, nodeId: row.node_id, ...facts, at: v.at },
      })
    }
    if (!events.length) return
    // No change commits with them (the reports are stored already): group-committed with the
    // other events of this turn, each durable before this resolves.
    await Promise.all(events.map((e) => this.outbox.publish(e)))
    this.relay()
  }

  /** The facts of the stored reports of screens not seen here yet (read before this batch is stored). */
  private async primeFacts(known: readonly { screenId: string }[]): Promise<void> {
    const unseen = known.filter((v) => !this.lastFacts.has(v.screenId)).map((v) => v.screenId)
    if (!unseen.length) return
    for (const [id, text] of await this.repo.reportedOf(unseen)) {
      const r = parseReported(text)
      if (r.ok && !this.lastFacts.has(id)) this.lastFacts.set(id, JSON.stringify(factsOf(r.value)))
    }
  }

  /** Queues an outbox dispatch for the changes just committed (webhooks, then the bus and its listeners). */
  private relay(): void {
    this.announcing = this.announcing.then(() =>
      this.outbox.dispatch().then(
        () => undefined,
        (err) => this.log.error({ err }, 'dispatching screen status events failed'),
      ),
    )
  }

  /** A dispatch run's `screen.online` / `screen.offline` events, to the status listeners. */
  private async heard(events: DomainEvent[]): Promise<void> {
    const changes: ScreenStatusChange[] = []
    for (const e of events) {
      if (e.event !== 'screen.online' && e.event !== 'screen.offline') continue
      const d = e.data as { screenId: string; screenName: string; nodeId: string | null; at: string; since?: string }
      changes.push({
        workspaceId: e.workspaceId,
        screenId: d.screenId,
        screenName: d.screenName,
        nodeId: d.nodeId,
        status: e.event === 'screen.online' ? 'online' : 'offline',
        at: d.at,
        since: d.since ?? null,
      })
    }
    if (!changes.length) return
    for (const l of [...this.statusListeners]) {
      try {
        await l(changes)
      } catch (err) {
        this.log.error({ err }, 'screen status listener failed')
      }
    }
  }
}

/** The outbox event of a transition. */
function statusEvent(id: string, row: ScreenRow, status: 'online' | 'offline', at: string, since: string | null): DomainEvent {
  return {
    event: status === 'online' ? 'screen.online' : 'screen.offline',
    workspaceId: row.workspace_id,
    occurredAt: at,
    data: { screenId: id, screenName: row.name, nodeId: row.node_id, at, ...(since ? { since } : {}) },
  }
}
