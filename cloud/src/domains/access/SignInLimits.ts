// Failed console sign-ins, counted so that guessing is slow and nobody can lock another
// person out. Only failures count, in fixed clock-aligned 15-minute windows:
//   - a browser that signed in to the address before (it holds a device cookie) has its
//     own count: 10 failures, and only it is held off;
//   - any other browser counts per address and client address (5), and all of them
//     together per address (50).
// An attacker guessing at someone's address from elsewhere therefore exhausts only the
// counts of browsers without the owner's device cookie: the owner signs in from the
// browser they used before. There is deliberately no count per client address alone:
// behind a proxy (SVC_TRUST_PROXY unset) every client shares one address, and such a count
// would let one attacker hold off everyone. Past a count the attempt answers 429 before
// the password is checked, so a right guess cannot be told from a wrong one.
// One process counts in memory (bounded); the instances of one cloud count in Redis and
// fall back to memory while Redis does not answer.
import type { Clock } from '../../platform/clock.js'
import { incrWindow, type RedisClient } from '../../platform/cluster/redis.js'

export const SIGN_IN_WINDOW_SECONDS = 15 * 60
export const SIGN_IN_LIMITS = { device: 10, addressAndClient: 5, address: 50 } as const

/** The counts one attempt is held to. */
export type SignInCount = { kind: 'device'; id: string } | { kind: 'browser'; email: string; ip: string }

const MAX_KEYS = 50_000

export interface FailureStore {
  get(key: string): number | Promise<number>
  add(key: string, windowMs: number): number | Promise<number>
}

export class MemoryFailureStore implements FailureStore {
  private readonly counts = new Map<string, number>()
  get(key: string): number {
    return this.counts.get(key) ?? 0
  }
  add(key: string): number {
    if (this.counts.size >= MAX_KEYS) this.counts.delete(this.counts.keys().next().value!)
    const n = (this.counts.get(key) ?? 0) + 1
    this.counts.set(key, n)
    return n
  }
  /** Forgets windows that ended (keys end with their window's start). */
  sweep(currentWindow: number): void {
    for (const k of this.counts.keys()) if (Number(k.slice(k.lastIndexOf(':') + 1)) < currentWindow) this.counts.delete(k)
  }
}

export class RedisFailureStore implements FailureStore {
  private readonly fallback = new MemoryFailureStore()
  constructor(private readonly redis: RedisClient) {}
  async get(key: string): Promise<number> {
    try {
      return Number((await this.redis.get(`si:${key}`)) ?? 0)
    } catch {
      return this.fallback.get(key)
    }
  }
  async add(key: string, windowMs: number): Promise<number> {
    try {
      return await incrWindow(this.redis, `si:${key}`, windowMs)
    } catch {
      return this.fallback.add(key)
    }
  }
}

export class SignInLimits {
  constructor(
    private readonly clock: Clock,
    private readonly store: FailureStore = new MemoryFailureStore(),
  ) {}

  private window(): { start: number; resetSeconds: number } {
    const ms = SIGN_IN_WINDOW_SECONDS * 1000
    const now = this.clock.now().getTime()
    const start = Math.floor(now / ms) * ms
    if (this.store instanceof MemoryFailureStore) this.store.sweep(start)
    return { start, resetSeconds: Math.max(1, Math.ceil((start + ms - now) / 1000)) }
  }

  private static keys(c: SignInCount, start: number): [string, number][] {
    if (c.kind === 'device') return [[`d:${c.id}:${start}`, SIGN_IN_LIMITS.device]]
    return [
      [`ac:${c.email}|${c.ip}:${start}`, SIGN_IN_LIMITS.addressAndClient],
      [`a:${c.email}:${start}`, SIGN_IN_LIMITS.address],
    ]
  }

  /** Seconds until the attempt may be made, or 0 when it may be made now. */
  async heldFor(c: SignInCount): Promise<number> {
    const w = this.window()
    for (const [key, limit] of SignInLimits.keys(c, w.start)) if ((await this.store.get(key)) >= limit) return w.resetSeconds
    return 0
  }

  /** Counts one failed attempt. */
  async failed(c: SignInCount): Promise<void> {
    const w = this.window()
    for (const [key] of SignInLimits.keys(c, w.start)) await this.store.add(key, SIGN_IN_WINDOW_SECONDS * 1000)
  }
}
