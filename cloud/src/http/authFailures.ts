// Invalid credentials are bounded per client address: after AUTH_FAILURE_LIMIT failed
// authentications in a fixed 60-second window, every credentialed request from that
// address answers 429 rate_limited (with Retry-After) until the window ends, without
// touching the database. A negative cache remembers recently refused tokens, so the same
// bad token presented again costs no lookup either. Both live in memory and are bounded.
import { createHash } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { RateDecision } from './rateLimit.js'

export const AUTH_FAILURE_LIMIT = 60
export const AUTH_FAILURE_WINDOW_SECONDS = 60
/** How long a refused token is answered from memory. */
const NEGATIVE_TTL_MS = 5 * 60_000
const MAX_ADDRESSES = 50_000
const MAX_NEGATIVE = 20_000

export class AuthFailureGuard {
  private readonly windows = new Map<string, { windowStart: number; count: number }>()
  private readonly refused = new Map<string, number>()

  constructor(
    private readonly clock: Clock,
    readonly limit = AUTH_FAILURE_LIMIT,
    readonly windowSeconds = AUTH_FAILURE_WINDOW_SECONDS,
  ) {}

  private windowStart(now: number): number {
    const ms = this.windowSeconds * 1000
    return Math.floor(now / ms) * ms
  }

  private decision(count: number, now: number): RateDecision {
    const start = this.windowStart(now)
    return {
      allowed: count < this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      resetSeconds: Math.max(1, Math.ceil((start + this.windowSeconds * 1000 - now) / 1000)),
      windowSeconds: this.windowSeconds,
    }
  }

  /** Where `address` stands in the current window (not allowed once over the limit). */
  check(address: string): RateDecision {
    const now = this.clock.now().getTime()
    const w = this.windows.get(address)
    return this.decision(w && w.windowStart === this.windowStart(now) ? w.count : 0, now)
  }

  /** Records a failed authentication from `address` with `token`. */
  fail(address: string, token: string | null): void {
    const now = this.clock.now().getTime()
    const start = this.windowStart(now)
    const w = this.windows.get(address)
    if (w && w.windowStart === start) w.count += 1
    else {
      if (this.windows.size >= MAX_ADDRESSES) for (const [k, v] of this.windows) if (v.windowStart < start) this.windows.delete(k)
      if (this.windows.size >= MAX_ADDRESSES) this.windows.delete(this.windows.keys().next().value!)
      this.windows.set(address, { windowStart: start, count: 1 })
    }
    if (token !== null) {
      const key = digest(token)
      this.refused.delete(key)
      if (this.refused.size >= MAX_NEGATIVE) this.refused.delete(this.refused.keys().next().value!)
      this.refused.set(key, now + NEGATIVE_TTL_MS)
    }
  }

  /** True when `token` was refused recently (answer 401 without a lookup). */
  knownBad(token: string): boolean {
    const key = digest(token)
    const until = this.refused.get(key)
    if (until === undefined) return false
    if (until <= this.clock.now().getTime()) {
      this.refused.delete(key)
      return false
    }
    return true
  }
}

const digest = (token: string) => createHash('sha256').update(token).digest('base64url')
