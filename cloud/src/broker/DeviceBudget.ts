// A message budget per device: a token bucket per client id, charged for every PUBLISH a
// device sends, in front of the device policy's authorizePublish. Within budget a message
// goes on as usual. Over it, the message is dropped (rerouted to a topic nobody hears, so
// Aedes acknowledges a QoS 1 publish as usual and keeps the connection), with a warning at
// most every `warnEveryMs` per device; a `reported` message is let through instead, because
// reported state is coalesced per screen downstream (the latest wins, the superseded ones
// are dropped there), and a `play-log` batch is refused (connection closed, no PUBACK) so
// the agent keeps it and sends it again. A device over budget for `sustainMs` without its bucket recovering to
// half is disconnected. Time is the process' monotonic clock: this is about load, not dates.
import { parseScreenTopic } from '@svc/shared/mqtt/index'
import type { BrokerPolicy } from './EmbeddedBroker.js'

export interface BudgetOptions {
  /** Tokens (messages) added per second. */
  ratePerSecond: number
  /** Bucket size: the burst a device may send at once. */
  burst: number
  /** Over budget this long without recovering: disconnected. */
  sustainMs: number
  warnEveryMs: number
}

export const DEFAULT_BUDGET: BudgetOptions = { ratePerSecond: 20, burst: 200, sustainMs: 10_000, warnEveryMs: 10_000 }

/** Where a dropped message goes: `$` topics match no wildcard, and nothing subscribes here. */
export const DROPPED_TOPIC = '$svc/over-budget'

export type Verdict = 'ok' | 'over' | 'sustained'

interface Bucket {
  tokens: number
  at: number
  overSince: number | null
  dropped: number
  warnedAt: number
}

type Log = { warn(obj: unknown, msg: string): void }

export class DeviceBudget {
  private readonly buckets = new Map<string, Bucket>()
  options: BudgetOptions
  log: Log = { warn: () => undefined }

  constructor(
    options: Partial<BudgetOptions> = {},
    private readonly now: () => number = () => performance.now(),
  ) {
    this.options = { ...DEFAULT_BUDGET, ...options }
  }

  /** Charges one message to the device. */
  take(clientId: string): Verdict {
    const { ratePerSecond, burst, sustainMs, warnEveryMs } = this.options
    const now = this.now()
    let b = this.buckets.get(clientId)
    if (!b) this.buckets.set(clientId, (b = { tokens: burst, at: now, overSince: null, dropped: 0, warnedAt: -Infinity }))
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * ratePerSecond)
    b.at = now
    if (b.overSince !== null && b.tokens >= burst / 2) b.overSince = null
    if (b.tokens >= 1) {
      b.tokens -= 1
      return 'ok'
    }
    b.overSince ??= now
    b.dropped++
    if (now - b.overSince >= sustainMs) {
      this.log.warn({ clientId, dropped: b.dropped, overForMs: Math.round(now - b.overSince) }, 'device over its message budget for too long: disconnected')
      this.buckets.delete(clientId)
      return 'sustained'
    }
    if (now - b.warnedAt >= warnEveryMs) {
      this.log.warn({ clientId, dropped: b.dropped, ratePerSecond, burst }, 'device over its message budget: messages dropped')
      b.warnedAt = now
    }
    return 'over'
  }

  /** The policy's authorizePublish with the budget in front of it. */
  wrap(inner: NonNullable<BrokerPolicy['authorizePublish']>): NonNullable<BrokerPolicy['authorizePublish']> {
    return (client, packet, cb) => {
      // client null: a Last Will the broker publishes for a gone client, not the device.
      if (!client) return inner(client, packet, cb)
      const verdict = this.take(client.id)
      if (verdict === 'ok') return inner(client, packet, cb)
      if (verdict === 'sustained') return cb(new Error('device over its message budget'))
      const kind = parseScreenTopic(packet.topic)?.kind
      if (kind === 'reported') return inner(client, packet, cb)
      // A play-log batch is never acknowledged and dropped (the agent would forget it): refused, the connection closes, it comes again later.
      if (kind === 'play-log') return cb(new Error('device over its message budget'))
      packet.topic = DROPPED_TOPIC
      packet.retain = false
      cb(null)
    }
  }
}
