// Live events for browsers and API callers (GET /v1/events/stream, server-sent events).
// Every event is recorded in the outbox with a time-ordered id before anything else sees
// it, on whichever instance caused it; so the hub reads the outbox itself rather than one
// process's bus: once a second while anyone listens, and at once when this process
// dispatches. Each read goes back LAG_MS before the newest id seen (an event whose
// transaction committed late, on another instance, still arrives) and skips ids already
// sent. A reconnecting client names the last id it had (`Last-Event-ID`) and gets what it
// missed from the outbox first (kept 7 days).
//
// Bounds: at most MAX_PER_WORKSPACE streams per workspace and MAX_PER_CREDENTIAL per
// credential, across the instances (StreamSlots.ts; 429 past either); a stream whose
// client reads slower than its events arrive holds at most MAX_QUEUED of them, then it is
// ended with an `overflow` message (the client reconnects with its Last-Event-ID).
import { randomUUID } from 'node:crypto'
import { encodeTime } from 'ulid'
import { ID_PREFIX, type TimerHandle, type Timers } from '@svc/shared'
import type { Clock } from '../../platform/clock.js'
import type { Executor } from '../../platform/db/Database.js'
import { ApiError } from '../../platform/errors.js'
import type { RedisClient } from '../../platform/cluster/redis.js'
import { EventOutboxRepository, type OutboxRow } from './EventOutboxRepository.js'
import { RENEW_MS, type Slot, StreamSlots } from './StreamSlots.js'

export const POLL_MS = 1000
export const LAG_MS = 5000
export const MAX_PER_WORKSPACE = 100
export const MAX_PER_CREDENTIAL = 10
export const MAX_QUEUED = 1000
/** Events a reconnecting client is sent from the outbox at most; older ones mean "reload". */
export const MAX_REPLAY = 1000

/** One event as a stream carries it. */
export interface StreamEvent {
  id: string
  event: string
  workspaceId: string
  occurredAt: string
  data: Record<string, unknown>
}

export interface StreamListener {
  workspaceId: string
  /** The credential it counts against: `apikey:<id>` or the user's id. */
  credential: string
  /** Whether this listener may see `e` (permission, reach). */
  accepts(e: StreamEvent): boolean
  send(e: StreamEvent): void
  /** Ends the stream: `stopping` when the service is (the client should come back after a short wait). */
  end(reason?: 'stopping'): void
}

/** The smallest outbox id made at `ms` (ids are `evt_` + a lower-case ULID). */
export function eventIdAt(ms: number): string {
  return `${ID_PREFIX.event}_${encodeTime(Math.max(0, ms), 10).toLowerCase()}`
}

function toEvent(r: OutboxRow): StreamEvent {
  return { id: r.id, event: r.event, workspaceId: r.workspace_id, occurredAt: r.occurred_at, data: JSON.parse(r.data) as Record<string, unknown> }
}

export class EventStreamHub {
  private readonly repo: EventOutboxRepository
  private readonly listeners = new Set<StreamListener>()
  private readonly slots: StreamSlots
  private renewTimer: TimerHandle | null = null
  /** Ids sent in the lag window, and when each may be forgotten. */
  private readonly seen = new Map<string, number>()
  private newest: string | null = null
  /** Whether the lag window was read once since the hub woke (that first read sends nothing). */
  private primed = false
  private priming: Promise<void> = Promise.resolve()
  private timer: TimerHandle | null = null
  private running: Promise<void> | null = null
  private again = false
  private closed = false

  constructor(
    k: Executor,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: { warn(obj: unknown, msg: string): void },
    private readonly opts: { pollMs?: number; lagMs?: number; maxPerWorkspace?: number; maxPerCredential?: number; redis?: RedisClient | null } = {},
  ) {
    this.repo = new EventOutboxRepository(k)
    this.slots = new StreamSlots(
      { perWorkspace: opts.maxPerWorkspace ?? MAX_PER_WORKSPACE, perCredential: opts.maxPerCredential ?? MAX_PER_CREDENTIAL },
      clock,
      opts.redis ?? null,
      log,
    )
  }

  get size(): number {
    return this.listeners.size
  }

  /**
   * Adds a listener (429 past the workspace's or the credential's bound); resolves to the
   * function that removes it (settling once its place is given back) and a promise that settles once the
   * listener is live: every event the outbox did not hold by then is sent to it.
   */
  async add(l: StreamListener): Promise<{ remove: () => Promise<void>; live: Promise<void> }> {
    if (this.closed) throw new ApiError('internal_error', 'The service is stopping.')
    const slot: Slot = { id: randomUUID(), workspaceId: l.workspaceId, credential: l.credential }
    const refused = await this.slots.take(slot)
    if (refused) {
      const { perWorkspace, perCredential } = this.slots.limits
      throw new ApiError(
        'rate_limited',
        refused === 'workspace'
          ? `At most ${perWorkspace} event streams per workspace are open at once; close one and retry.`
          : `At most ${perCredential} event streams per credential are open at once; close one and retry.`,
        { headers: { 'retry-after': '30' } },
      )
    }
    if (this.closed) {
      await this.slots.release(slot)
      throw new ApiError('internal_error', 'The service is stopping.')
    }
    this.listeners.add(l)
    if (this.listeners.size === 1) {
      // Live from now: the first read only notes what the lag window holds already (that is
      // what Last-Event-ID replays), the reads after it send what is new.
      this.newest = eventIdAt(this.clock.now().getTime() - this.lag)
      this.primed = false
      this.priming = this.poll()
      this.renewLater()
    }
    let removed = false
    /** Settles once the place is free on every instance. */
    const remove = async (): Promise<void> => {
      if (removed) return
      removed = true
      this.listeners.delete(l)
      const released = this.slots.release(slot)
      if (!this.listeners.size) {
        if (this.timer !== null) this.timers.clearTimer(this.timer)
        if (this.renewTimer !== null) this.timers.clearTimer(this.renewTimer)
        this.timer = null
        this.renewTimer = null
        this.newest = null
        this.seen.clear()
      }
      await released
    }
    return { remove, live: this.priming }
  }

  /** Renews the leases of this instance's places every RENEW_MS while it holds streams. */
  private renewLater(): void {
    if (this.renewTimer !== null) this.timers.clearTimer(this.renewTimer)
    this.renewTimer = this.timers.setTimer(() => {
      this.renewTimer = null
      if (this.closed || !this.listeners.size) return
      void this.slots.renew().finally(() => {
        if (!this.closed && this.listeners.size && this.renewTimer === null) this.renewLater()
      })
    }, RENEW_MS)
  }

  /**
   * The workspace's events after `lastId` (oldest first, at most MAX_REPLAY), or null when
   * the outbox no longer reaches back that far (the client should reload what it shows).
   */
  async replay(workspaceId: string, lastId: string): Promise<StreamEvent[] | null> {
    const rows = await this.repo.afterInWorkspace(workspaceId, lastId, MAX_REPLAY + 1)
    if (rows.length > MAX_REPLAY) return null
    if (!(await this.repo.exists(lastId))) return null
    return rows.map(toEvent)
  }

  /** Reads the outbox soon (this process dispatched events). */
  wake(): void {
    if (this.listeners.size) void this.poll()
  }

  /** Ends every stream (telling each the service is stopping) and reads no more. */
  close(): void {
    this.closed = true
    if (this.timer !== null) this.timers.clearTimer(this.timer)
    if (this.renewTimer !== null) this.timers.clearTimer(this.renewTimer)
    this.timer = null
    this.renewTimer = null
    for (const l of [...this.listeners]) l.end('stopping')
  }

  private get lag(): number {
    return this.opts.lagMs ?? LAG_MS
  }

  private schedule(): void {
    if (this.closed || !this.listeners.size) return
    if (this.timer !== null) this.timers.clearTimer(this.timer)
    this.timer = this.timers.setTimer(() => void this.poll(), this.opts.pollMs ?? POLL_MS)
  }

  /** One read of the outbox; reads overlapping one already running run once after it. */
  poll(): Promise<void> {
    if (this.running) {
      this.again = true
      return this.running
    }
    this.running = (async () => {
      do {
        this.again = false
        try {
          await this.readOnce()
        } catch (err) {
          this.log.warn({ err }, 'event stream: reading the outbox failed; retrying')
        }
      } while (this.again && this.listeners.size)
    })().finally(() => {
      this.running = null
      this.schedule()
    })
    return this.running
  }

  private async readOnce(): Promise<void> {
    if (!this.listeners.size || this.newest === null) return
    const now = this.clock.now().getTime()
    for (const [id, until] of this.seen) if (until < now) this.seen.delete(id)
    const windowStart = eventIdAt(now - this.lag)
    // biome-ignore lint/complexity/useMathMinMax: ids are strings (ordered as text), not numbers
    let from = this.newest < windowStart ? this.newest : windowStart
    for (;;) {
      const rows = await this.repo.after(from, 500)
      for (const r of rows) {
        if (this.seen.has(r.id)) continue
        this.seen.set(r.id, now + 2 * this.lag)
        if (r.id > this.newest!) this.newest = r.id
        if (!this.primed) continue
        const e = toEvent(r)
        for (const l of this.listeners) if (l.workspaceId === e.workspaceId && l.accepts(e)) l.send(e)
      }
      if (rows.length < 500) break
      from = rows[rows.length - 1]!.id
    }
    this.primed = true
  }
}
