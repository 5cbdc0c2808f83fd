// Failed authentications are bounded per client address and token kind, and only they are:
// a credential that authenticates is never held off, whatever else arrives from its address.
// Behind a reverse proxy every client can share one address (unless SVC_TRUST_PROXY names
// the proxy), so holding off an address would let one attacker lock out every user.
//
// Past AUTH_FAILURE_LIMIT unknown tokens of one kind (`ak_<region>_<env>_`, `ust_`, `oat_`)
// from one address in a fixed 60-second window, each further unknown token of that kind
// from there answers 429 rate_limited (with Retry-After) instead of 401. The token is still
// looked up (one indexed read): a valid key that is not cached yet must authenticate. A
// negative cache remembers recently refused tokens, so the same bad token presented again
// costs no lookup.
//
// One process counts in memory (bounded). The instances of one cloud (SVC_REDIS_URL) count
// in Redis: one key per address, kind and window, incremented atomically and expiring with
// the window, so an address refused on one instance is refused on all of them. When Redis
// does not answer, the count falls back to this instance's memory (the limit then holds per
// instance until Redis is back), as the rate limits do. The negative cache stays per
// instance: it only saves lookups, it decides nothing another instance would not.
//
// Forgetting the refused tokens (a user activated again) starts a new generation: a refusal
// decided in an earlier one (its lookup, or its awaited count, still running when the
// tokens were forgotten) is answered but not remembered, so it cannot bring back a refusal
// of a credential that is good again.
import { hash } from 'node:crypto'
import type { Clock } from '../clock.js'
import { incrWindow, type RedisClient } from '../cluster/redis.js'
import type { RateDecision } from './rateLimit.js'

export const AUTH_FAILURE_LIMIT = 60
export const AUTH_FAILURE_WINDOW_SECONDS = 60
/** How long a refused token is answered from memory. */
const NEGATIVE_TTL_MS = 5 * 60_000
const MAX_COUNTS = 50_000
const MAX_NEGATIVE = 20_000

/** The kind of a presented token, the part before its secret: failures are counted per kind. */
export function tokenKind(token: string): string {
  const m = /^(ak_[a-z0-9]{1,8}_[a-z0-9]{1,8}_|ust_|oat_)/.exec(token)
  return m ? m[1]! : 'other'
}

/** Failed authentications per counting key (address and token kind) and window. */
export interface AuthFailureCounter {
  /** Adds one failure under `key` in the window starting at `windowStart` (`windowMs` long); answers the count so far. */
  add(key: string, windowStart: number, windowMs: number): number | Promise<number>
}

/** This process's counts, bounded to MAX_COUNTS keys. */
export class MemoryAuthFailureCounter implements AuthFailureCounter {
  private readonly windows = new Map<string, { windowStart: number; count: number }>()

  add(key: string, windowStart: number): number {
    const w = this.windows.get(key)
    if (w && w.windowStart === windowStart) return ++w.count
    if (this.windows.size >= MAX_COUNTS) for (const [k, v] of this.windows) if (v.windowStart < windowStart) this.windows.delete(k)
    if (this.windows.size >= MAX_COUNTS) this.windows.delete(this.windows.keys().next().value!)
    this.windows.set(key, { windowStart, count: 1 })
    return 1
  }
}

/**
 * Counts shared by every instance: `INCR` + `PEXPIRE` in one `MULTI` on a key named after
 * the address, the token kind and the window. Falls back to memory when Redis fails.
 */
export class RedisAuthFailureCounter implements AuthFailureCounter {
  private readonly fallback = new MemoryAuthFailureCounter()

  constructor(private readonly redis: RedisClient) {}

  async add(key: string, windowStart: number, windowMs: number): Promise<number> {
    try {
      return await incrWindow(this.redis, `af:${key}:${windowStart}`, windowMs)
    } catch {
      return this.fallback.add(key, windowStart)
    }
  }
}

export class AuthFailureGuard {
  private readonly refused = new Map<string, number>()
  private forgotten = 0

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

  /** The current generation of refused tokens: read before a token is looked up, and given to `fail`. */
  generation(): number {
    return this.forgotten
  }

  /**
   * Records that `token` from `address` did not authenticate, and answers where that address
   * stands for tokens of its kind: not allowed (answer 429) once past the limit in the window.
   * `since` is the generation read before the token was looked up: when the refused tokens were
   * forgotten since, the token is not remembered as refused (it may be good again).
   */
  async fail(address: string, token: string | null, since: number): Promise<RateDecision> {
    const now = this.clock.now().getTime()
    const start = this.windowStart(now)
    const count = await this.counter.add(`${address}:${token === null ? 'none' : tokenKind(token)}`, start, this.windowSeconds * 1000)
    if (token !== null && since === this.forgotten) {
      const key = digest(token)
      this.refused.delete(key)
      if (this.refused.size >= MAX_NEGATIVE) this.refused.delete(this.refused.keys().next().value!)
      this.refused.set(key, now + NEGATIVE_TTL_MS)
    }
    return {
      allowed: count <= this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      resetSeconds: Math.max(1, Math.ceil((start + this.windowSeconds * 1000 - now) / 1000)),
      windowSeconds: this.windowSeconds,
    }
  }

  /**
   * Forgets every refused token (a credential refused a moment ago may be good again: a user
   * activated again), including those whose refusal is still being decided.
   */
  forgetRefused(): void {
    this.forgotten++
    this.refused.clear()
  }

  /** True when `token` was refused recently (answer without a lookup). */
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
