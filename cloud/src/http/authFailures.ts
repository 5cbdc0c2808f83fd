// Invalid credentials are bounded per client address: after AUTH_FAILURE_LIMIT failed
// authentications in a fixed 60-second window, every credentialed request from that
// address answers 429 rate_limited (with Retry-After) until the window ends, without
// touching the database. A negative cache remembers recently refused tokens, so the same
// bad token presented again costs no lookup either.
//
// One process counts in memory (bounded). The instances of one cloud (SVC_REDIS_URL) count
// in Redis: one key per address and window, incremented atomically and expiring with the
// window, so an address refused on one instance is refused on all of them. When Redis does
// not answer, the count falls back to this instance's memory (the limit then holds per
// instance until Redis is back), as the rate limits do. The negative cache stays per
// instance: it only saves lookups, it decides nothing another instance would not.
import { hash } from 'node:crypto'
import type { Clock } from '../clock.js'
import { incrWindow, type RedisClient } from '../cluster/redis.js'
import type { RateDecision } from './rateLimit.js'

export const AUTH_FAILURE_LIMIT = 60
export const AUTH_FAILURE_WINDOW_SECONDS = 60
/** How long a refused token is answered from memory. */
const NEGATIVE_TTL_MS = 5 * 60_000
const MAX_ADDRESSES = 50_000
const MAX_NEGATIVE = 20_000

/** Failed authentications per address and window. */
export interface AuthFailureCounter {
  /** Failures of `address` in the window starting at `windowStart` (a memory count answers at once). */
  count(address: string, windowStart: number): number | Promise<number>
  /** Adds one failure of `address` in that window (`windowMs` long). */
  add(address: string, windowStart: number, windowMs: number): Promise<void>
}

/** This process's counts, bounded to MAX_ADDRESSES addresses. */
export class MemoryAuthFailureCounter implements AuthFailureCounter {
  private readonly windows = new Map<string, { windowStart: number; count: number }>()

  count(address: string, windowStart: number): number {
    const w = this.windows.get(address)
    return w && w.windowStart === windowStart ? w.count : 0
  }

  async add(address: string, windowStart: number): Promise<void> {
    const w = this.windows.get(address)
    if (w && w.windowStart === windowStart) {
      w.count += 1
      return
    }
    if (this.windows.size >= MAX_ADDRESSES) for (const [k, v] of this.windows) if (v.windowStart < windowStart) this.windows.delete(k)
    if (this.windows.size >= MAX_ADDRESSES) this.windows.delete(this.windows.keys().next().value!)
    this.windows.set(address, { windowStart, count: 1 })
  }
}

/**
 * Counts shared by every instance: `INCR` + `PEXPIRE` in one `MULTI` on a key named after
 * the address and the window, read with `GET`. Falls back to memory when Redis fails.
 */
export class RedisAuthFailureCounter implements AuthFailureCounter {
  private readonly fallback = new MemoryAuthFailureCounter()

  constructor(private readonly redis: RedisClient) {}

  private key(address: string, windowStart: number): string {
    return `af:${address}:${windowStart}`
  }

  async count(address: string, windowStart: number): Promise<number> {
    try {
      const v = await this.redis.get(this.key(address, windowStart))
      return Math.max(Number(v ?? 0), this.fallback.count(address, windowStart))
    } catch {
      return this.fallback.count(address, windowStart)
    }
  }

  async add(address: string, windowStart: number, windowMs: number): Promise<void> {
    const name = this.key(address, windowStart)
    try {
      await incrWindow(this.redis, name, windowMs)
    } catch {
      await this.fallback.add(address, windowStart)
    }
  }
}

export class AuthFailureGuard {
  private readonly refused = new Map<string, number>()

  constructor(
    private readonly clock: Clock,
    private readonly counter: AuthFailureCounter = new MemoryAuthFailureCounter(),
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

  /**
   * Where `address` stands in the current window (not allowed once over the limit). A count
   * kept in memory answers at once (not a promise), so authentication need not wait.
   */
  check(address: string): RateDecision | Promise<RateDecision> {
    const now = this.clock.now().getTime()
    const count = this.counter.count(address, this.windowStart(now))
    return typeof count === 'number' ? this.decision(count, now) : count.then((n) => this.decision(n, now))
  }

  /** Records a failed authentication from `address` with `token`. */
  async fail(address: string, token: string | null): Promise<void> {
    const now = this.clock.now().getTime()
    await this.counter.add(address, this.windowStart(now), this.windowSeconds * 1000)
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

const digest = (token: string) => hash('sha256', token, 'base64url')
