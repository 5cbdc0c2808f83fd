// Fixed, clock-aligned rate windows (SPEC "Limits"): 600 requests per 60-second window per
// workspace for API-key traffic, plus optional per-key limits on single routes (media
// upload: 300/min). Hand-written rather than @fastify/rate-limit because that plugin's
// windows start at each key's first request and it lacks `RateLimit-Policy`. The store is
// a seam: one process keeps counters in memory; several would share a store.
import type { Clock } from '../clock.js'

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number
  windowSeconds: number
}

export interface RateLimitStore {
  /** Adds one hit to `key` in the window starting at `windowStart` and returns the count. */
  incr(key: string, windowStart: number): number
}

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly counters = new Map<string, { windowStart: number; count: number }>()
  incr(key: string, windowStart: number): number {
    const c = this.counters.get(key)
    if (!c || c.windowStart !== windowStart) {
      if (this.counters.size > 50_000) this.sweep(windowStart)
      this.counters.set(key, { windowStart, count: 1 })
      return 1
    }
    c.count += 1
    return c.count
  }
  private sweep(current: number): void {
    for (const [k, v] of this.counters) if (v.windowStart < current) this.counters.delete(k)
  }
}

export class RateLimiter {
  constructor(
    private readonly clock: Clock,
    private readonly store: RateLimitStore = new MemoryRateLimitStore(),
  ) {}

  hit(key: string, limit: number, windowSeconds = 60): RateDecision {
    const now = this.clock.now().getTime()
    const windowMs = windowSeconds * 1000
    const windowStart = Math.floor(now / windowMs) * windowMs
    const count = this.store.incr(key, windowStart)
    const resetSeconds = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000))
    return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetSeconds, windowSeconds }
  }
}

export function rateHeaders(d: RateDecision): Record<string, string> {
  return {
    'ratelimit-limit': String(d.limit),
    'ratelimit-remaining': String(d.remaining),
    'ratelimit-reset': String(d.resetSeconds),
    'ratelimit-policy': `${d.limit};w=${d.windowSeconds}`,
  }
}
