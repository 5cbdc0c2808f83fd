// Fixed, clock-aligned rate windows: 600 requests per 60-second window per
// workspace for API-key traffic, plus optional per-key limits on single routes (media
// upload: 300/min). Hand-written rather than @fastify/rate-limit because that plugin's
// windows start at each key's first request and it lacks `RateLimit-Policy`. One process
// keeps its counters in memory; the instances of one cloud count in Redis (SVC_REDIS_URL),
// so N instances allow what one allows.
import type { Clock } from '../clock.js'
import { incrWindow, type RedisClient } from '../cluster/redis.js'

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number
  windowSeconds: number
}

export interface RateLimitStore {
  /** Adds one hit to `key` in the window starting at `windowStart` (`windowMs` long) and returns the count. */
  incr(key: string, windowStart: number, windowMs: number): number | Promise<number>
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

/**
 * Counters shared by every instance: one `INCR` + `PEXPIRE` in a `MULTI` per hit on a key
 * named after the window, so windows stay clock-aligned across instances and expire by
 * themselves. When Redis does not answer, the hit is counted in this instance's memory
 * instead (the limit then holds per instance until Redis is back).
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly fallback = new MemoryRateLimitStore()

  constructor(private readonly redis: RedisClient) {}

  async incr(key: string, windowStart: number, windowMs: number): Promise<number> {
    const name = `rl:${key}:${windowStart}`
    try {
      return await incrWindow(this.redis, name, windowMs)
    } catch {
      return this.fallback.incr(key, windowStart)
    }
  }
}

export class RateLimiter {
  constructor(
    private readonly clock: Clock,
    private readonly store: RateLimitStore = new MemoryRateLimitStore(),
  ) {}

  /**
   * Counts one hit. With the memory store the decision comes back at once (not a promise):
   * authentication then answers without waiting for a turn of the event loop.
   */
  hit(key: string, limit: number, windowSeconds = 60): RateDecision | Promise<RateDecision> {
    const now = this.clock.now().getTime()
    const windowMs = windowSeconds * 1000
    const windowStart = Math.floor(now / windowMs) * windowMs
    const count = this.store.incr(key, windowStart, windowMs)
    return typeof count === 'number'
      ? decision(count, limit, now, windowStart, windowSeconds)
      : count.then((n) => decision(n, limit, now, windowStart, windowSeconds))
  }
}

function decision(count: number, limit: number, now: number, windowStart: number, windowSeconds: number): RateDecision {
  const resetSeconds = Math.max(1, Math.ceil((windowStart + windowSeconds * 1000 - now) / 1000))
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetSeconds, windowSeconds }
}

export function rateHeaders(d: RateDecision): Record<string, string> {
  return {
    'ratelimit-limit': String(d.limit),
    'ratelimit-remaining': String(d.remaining),
    'ratelimit-reset': String(d.resetSeconds),
    'ratelimit-policy': `${d.limit};w=${d.windowSeconds}`,
  }
}

/** The same four headers as rateHeaders, set on `reply` one by one (the per-request path). */
export function setRateHeaders(reply: { header(name: string, value: string): unknown }, d: RateDecision): void {
  reply.header('ratelimit-limit', String(d.limit))
  reply.header('ratelimit-remaining', String(d.remaining))
  reply.header('ratelimit-reset', String(d.resetSeconds))
  reply.header('ratelimit-policy', `${d.limit};w=${d.windowSeconds}`)
}
