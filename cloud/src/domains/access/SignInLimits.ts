// Failed console sign-ins, counted so that guessing is slow and nobody can lock another
// person out. Only failures count in the end, in fixed clock-aligned 15-minute windows:
//   - a browser that signed in to the account before (it holds a device cookie earned on
//     it) has its own count when that account is the one the sign-in checks: 10
//     failures, and only it is held off;
//   - any other browser counts per address and client address (5), and all of them
//     together per address (50).
// An attacker guessing at someone's address from elsewhere therefore exhausts only the
// counts of browsers without the owner's device cookie: the owner signs in from the
// browser they used before. There is deliberately no count per client address alone:
// behind a proxy (SVC_TRUST_PROXY unset) every client shares one address, and such a count
// would let one attacker hold off everyone. An attempt is counted before its password is
// checked, with one atomic increment per count (Redis INCRBY, or a synchronous add in
// memory): past a count it answers 429 unchecked (so a right guess cannot be told from a
// wrong one) and its increments are taken back; a right password, or an attempt the
// password work queue refused, takes them back afterwards. So attempts sent at once are
// held to the count exactly: 30 at once from one client get 5 checks, not 30.
// One process counts in memory (bounded); the instances of one cloud count in Redis and
// fall back to memory while Redis does not answer.
import type { Clock } from '../../platform/clock.js'
import { addWindow, type RedisClient } from '../../platform/cluster/redis.js'

export const SIGN_IN_WINDOW_SECONDS = 15 * 60
export const SIGN_IN_LIMITS = { device: 10, addressAndClient: 5, address: 50 } as const

/** The counts one attempt is held to. */
export type SignInCount = { kind: 'device'; id: string } | { kind: 'browser'; email: string; ip: string }

const MAX_KEYS = 50_000

export interface FailureStore {
  /** Adds `by` (1 or -1) to the key's count; answers the count after it. */
  add(key: string, windowMs: number, by?: 1 | -1): number | Promise<number>
}

export class MemoryFailureStore implements FailureStore {
  private readonly counts = new Map<string, number>()
  add(key: string, _windowMs?: number, by: 1 | -1 = 1): number {
    if (!this.counts.has(key) && this.counts.size >= MAX_KEYS) this.counts.delete(this.counts.keys().next().value!)
    const n = Math.max(0, (this.counts.get(key) ?? 0) + by)
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
  async add(key: string, windowMs: number, by: 1 | -1 = 1): Promise<number> {
    try {
      return await addWindow(this.redis, `si:${key}`, by, windowMs)
    } catch {
      return this.fallback.add(key, windowMs, by)
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

  /**
   * Counts one attempt before its password is checked. `heldFor`: seconds until an attempt
   * may be made (the attempt is not counted), or 0: go ahead, and call `takeBack` when the
   * attempt turns out not to be a failure (a right password, or refused before any check).
   */
  async begin(c: SignInCount): Promise<{ heldFor: number; takeBack: () => Promise<void> }> {
    const w = this.window()
    const counted: string[] = []
    const takeBack = async () => {
      for (const key of counted.splice(0)) await this.store.add(key, SIGN_IN_WINDOW_SECONDS * 1000, -1)
    }
    for (const [key, limit] of SignInLimits.keys(c, w.start)) {
      counted.push(key)
      if ((await this.store.add(key, SIGN_IN_WINDOW_SECONDS * 1000)) > limit) {
        await takeBack()
        return { heldFor: w.resetSeconds, takeBack: async () => {} }
      }
    }
    return { heldFor: 0, takeBack }
  }
}
