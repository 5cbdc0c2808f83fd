// A message budget per device: a token bucket per client id, charged for every PUBLISH a
// device sends, in front of the device policy's authorizePublish. Within budget a message
// goes on as usual. Over it:
// - the message is dropped (rerouted to a topic nobody hears, so Aedes acknowledges a QoS 1
//   publish as usual and keeps the connection), with a warning at most every `warnEveryMs`
//   per device; a `reported` message is let through instead, because reported state is
//   coalesced per screen downstream (the latest wins, the superseded ones are dropped there),
//   and a `play-log` batch is refused (connection closed, no PUBACK) so the agent keeps it
//   and sends it again;
// - and the broker stops reading the device's connection until its bucket has refilled
//   (`resumeTokens`, one second of its rate by default). Aedes reads a connection again only
//   once every message of its last read is handled, so holding the over-budget message holds
//   the socket: what the device keeps sending waits in its own socket buffers (TCP flow
//   control, for WebSocket too: the stream pauses the socket under it) instead of being read
//   and parsed only to be dropped.
// A device over budget for `sustainMs` without its bucket recovering to half is disconnected
// (counted); it may reconnect, and its bucket is kept, so a device that comes back still
// flooding is cut at its first message over budget. Time is the injected clock and timers
// (the system's by default): this is about load, not dates.
import { parseScreenTopic } from '@svc/shared/mqtt/index'
import { systemClock, type Clock, type Timers } from '@svc/shared'
import type { BrokerPolicy } from './BrokerPolicy.js'

export interface BudgetOptions {
  /** Tokens (messages) added per second. */
  ratePerSecond: number
  /** Bucket size: the burst a device may send at once. */
  burst: number
  /** Over budget this long without recovering: disconnected. */
  sustainMs: number
  warnEveryMs: number
  /** Reading resumes once the bucket holds this many tokens (capped at `burst`); default one second of the rate. */
  resumeTokens?: number
}

export const DEFAULT_BUDGET: BudgetOptions = { ratePerSecond: 20, burst: 200, sustainMs: 2000, warnEveryMs: 10_000 }

/** Where a dropped message goes: `$` topics match no wildcard, and nothing subscribes here. */
export const DROPPED_TOPIC = '$svc/over-budget'

export type Verdict = 'ok' | 'over' | 'sustained'

interface Bucket {
  tokens: number
  at: number
  overSince: number | null
  dropped: number
  warnedAt: number
  /** While reading is paused: what runs when it resumes, and the timer that resumes it. */
  waiting: (() => void)[]
  timer: unknown
}

/** What the budget did since the process started (tests and logs read it). */
export interface BudgetStats {
  /** Messages over budget (dropped, or a `reported` let through). */
  over: number
  /** Times a device's reading was paused. */
  pauses: number
  /** Devices disconnected for a sustained flood. */
  disconnects: number
}

type Log = { warn(obj: unknown, msg: string): void }

export class DeviceBudget {
  private readonly buckets = new Map<string, Bucket>()
  /** Connections already refused for a sustained flood (the rest of their last read is refused without a count). */
  private readonly cut = new WeakSet<object>()
  options: BudgetOptions
  log: Log = { warn: () => undefined }
  /** The clock and timers the budget runs on (tests hand it a ManualClock). */
  clock: Clock & Timers
  readonly stats: BudgetStats = { over: 0, pauses: 0, disconnects: 0 }

  constructor(options: Partial<BudgetOptions> = {}, clock: Clock & Timers = systemClock) {
    this.options = { ...DEFAULT_BUDGET, ...options }
    this.clock = clock
  }

  /** Charges one message to the device. */
  take(clientId: string): Verdict {
    const { ratePerSecond, burst, sustainMs, warnEveryMs } = this.options
    const now = this.clock.now().getTime()
    let b = this.buckets.get(clientId)
    if (!b) this.buckets.set(clientId, (b = { tokens: burst, at: now, overSince: null, dropped: 0, warnedAt: -Infinity, waiting: [], timer: null }))
    // max(0, …): a wall clock stepped back refills nothing rather than draining the bucket.
    b.tokens = Math.min(burst, b.tokens + (Math.max(0, now - b.at) / 1000) * ratePerSecond)
    b.at = now
    if (b.overSince !== null && b.tokens >= burst / 2) b.overSince = null
    if (b.tokens >= 1) {
      b.tokens -= 1
      return 'ok'
    }
    b.overSince ??= now
    b.dropped++
    this.stats.over++
    if (now - b.overSince >= sustainMs) {
      b.warnedAt = now
      this.log.warn({ clientId, dropped: b.dropped, overForMs: Math.round(now - b.overSince) }, 'device over its message budget for too long: disconnected')
      this.stats.disconnects++
      return 'sustained'
    }
    if (now - b.warnedAt >= warnEveryMs) {
      this.log.warn({ clientId, dropped: b.dropped, ratePerSecond, burst }, 'device over its message budget: messages dropped, reading paused')
      b.warnedAt = now
    }
    return 'over'
  }

  /** Is reading from this device paused right now? */
  isPaused(clientId: string): boolean {
    return this.buckets.get(clientId)?.timer != null
  }

  /**
   * Runs `then` once the device's bucket has refilled to `resumeTokens`, or when its
   * sustained-flood deadline comes, whichever is first; every message over budget meanwhile
   * waits for the same moment (one timer per device).
   */
  private pause(clientId: string, then: () => void): void {
    const b = this.buckets.get(clientId)
    if (!b) return then()
    b.waiting.push(then)
    if (b.timer != null) return
    const { ratePerSecond, burst, sustainMs } = this.options
    const want = Math.min(burst, this.options.resumeTokens ?? Math.max(1, ratePerSecond))
    const now = this.clock.now().getTime()
    let waitMs = ratePerSecond > 0 ? ((want - b.tokens) / ratePerSecond) * 1000 : sustainMs
    if (b.overSince !== null) waitMs = Math.min(waitMs, b.overSince + sustainMs - now)
    this.stats.pauses++
    b.timer = this.clock.setTimer(
      () => {
        b.timer = null
        const waiting = b.waiting
        b.waiting = []
        for (const fn of waiting) fn()
      },
      Math.max(1, Math.ceil(waitMs)),
    )
  }

  /** The broker is closing: paused devices stay paused (their connections are being closed), no timer is left. */
  clear(): void {
    for (const b of this.buckets.values()) {
      if (b.timer != null) this.clock.clearTimer(b.timer)
      b.timer = null
      b.waiting = []
    }
  }

  /** The policy's authorizePublish with the budget in front of it. */
  wrap(inner: NonNullable<BrokerPolicy['authorizePublish']>): NonNullable<BrokerPolicy['authorizePublish']> {
    return (client, packet, cb) => {
      // client null: a Last Will the broker publishes for a gone client, not the device.
      if (!client) return inner(client, packet, cb)
      if (this.cut.has(client)) return cb(new Error('device over its message budget'))
      const verdict = this.take(client.id)
      if (verdict === 'ok') return inner(client, packet, cb)
      if (verdict === 'sustained') {
        this.cut.add(client)
        return cb(new Error('device over its message budget'))
      }
      const kind = parseScreenTopic(packet.topic)?.kind
      // A play-log batch is never acknowledged and dropped (the agent would forget it): refused, the connection closes, it comes again later.
      if (kind === 'play-log') return cb(new Error('device over its message budget'))
      // Handled when reading resumes: until then aedes reads nothing more from this device.
      this.pause(client.id, () => {
        if (kind === 'reported') return inner(client, packet, cb)
        packet.topic = DROPPED_TOPIC
        packet.retain = false
        cb(null)
      })
    }
  }
}
