// The bounds on what one screen may claim in its play log (PlayLogService applies them):
// - plausible times: a play ends no later than now and starts no earlier than the screen's
//   pairing, each give or take PLAY_CLOCK_SKEW_MS (the player's clock is not the cloud's);
// - no more plays at once than zones: a screen shows one thing per zone of its layout, so a
//   play that would make more concurrent plays than the workspace's largest layout has zones
//   (at least 1) is refused (`overZones`);
// - a record rate per screen (ScreenRates: a token bucket in memory, on the injected clock;
//   a device is connected to one instance, so its own instance counts it);
// - a quota of stored plays per workspace and UTC day (DailyCounter: in memory, or in Redis
//   for the instances of one cloud, as the API rate limits are).
import type { Clock } from '../../platform/clock.js'
import { addWindow, type RedisClient } from '../../platform/cluster/redis.js'

/** How far a play's times may be off the cloud's clock (future end, start before pairing). */
export const PLAY_CLOCK_SKEW_MS = 5 * 60_000
/** At most this many stored plays are read to check a batch for overlaps. */
export const OVERLAP_ROWS = 1000
export const DAY_MS = 86_400_000

/** A play as an interval [s, e) in ms; a play of no length still holds its instant. */
export interface Span {
  s: number
  e: number
}

export function span(startedAt: string, endedAt: string): Span {
  const s = Date.parse(startedAt)
  return { s, e: Math.max(Date.parse(endedAt), s + 1) }
}

/**
 * Would `c` make more than `zones` plays at once together with `held`? Plays that only touch
 * (one ends when the next starts, as plays in one zone follow each other) do not overlap.
 */
export function overZones(c: Span, held: readonly Span[], zones: number): boolean {
  const points: [number, number][] = []
  for (const h of held) if (h.s < c.e && c.s < h.e) points.push([Math.max(h.s, c.s), 1], [Math.min(h.e, c.e), -1])
  if (points.length / 2 + 1 <= zones) return false
  // At one instant an end goes before a start: touching is not overlapping.
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  let n = 1
  for (const [, d] of points) {
    n += d
    if (n > zones) return true
  }
  return false
}

/**
 * A token bucket of records per screen that may go into debt: a batch takes its records at
 * once and waits until the bucket is back at zero. So a screen stores at most `burst` plays
 * at once and `rate` a second after that; as a screen's batches are handled one after the
 * other, a batch waits at most its own size at the rate (200 / 10 = 20 s at the lowest rate).
 * It also counts the plays a screen had to wait for since its bucket was last full: an agent
 * draining a backlog after an outage waits for at most what its play log holds.
 */
export class ScreenRates {
  private readonly buckets = new Map<string, { tokens: number; at: number; slowed: number }>()

  constructor(
    private readonly clock: Clock,
    private readonly rate: number,
    private readonly burst: number,
  ) {}

  /** Takes `n` records: the ms to wait before storing them (0: at once), and the plays slowed since the bucket was last full. */
  take(screenId: string, n: number): { waitMs: number; slowed: number } {
    const now = this.clock.now().getTime()
    let b = this.buckets.get(screenId)
    if (!b) this.buckets.set(screenId, (b = { tokens: this.burst, at: now, slowed: 0 }))
    b.tokens = Math.min(this.burst, b.tokens + (Math.max(0, now - b.at) / 1000) * this.rate)
    b.at = now
    if (b.tokens >= this.burst) b.slowed = 0
    const before = b.tokens
    b.tokens -= n
    if (b.tokens >= 0) return { waitMs: 0, slowed: b.slowed }
    b.slowed += n - Math.max(0, before)
    return { waitMs: Math.ceil((-b.tokens / this.rate) * 1000), slowed: b.slowed }
  }
}

/** Counts in fixed windows: adds `n` to `key` in the window starting at `windowStart` and answers the window's total. */
export interface DailyCounter {
  add(key: string, n: number, windowStart: number, windowMs: number): number | Promise<number>
}

export class MemoryDailyCounter implements DailyCounter {
  private readonly counts = new Map<string, { windowStart: number; n: number }>()
  add(key: string, n: number, windowStart: number): number {
    const c = this.counts.get(key)
    if (!c || c.windowStart !== windowStart) {
      if (this.counts.size > 50_000) for (const [k, v] of this.counts) if (v.windowStart < windowStart) this.counts.delete(k)
      this.counts.set(key, { windowStart, n })
      return n
    }
    c.n += n
    return c.n
  }
}

/** The instances of one cloud count together (`INCRBY` on a key per window); without Redis, in this instance's memory. */
export class RedisDailyCounter implements DailyCounter {
  private readonly fallback = new MemoryDailyCounter()
  constructor(private readonly redis: RedisClient) {}
  async add(key: string, n: number, windowStart: number, windowMs: number): Promise<number> {
    try {
      return await addWindow(this.redis, `pl:${key}:${windowStart}`, n, windowMs)
    } catch {
      return this.fallback.add(key, n, windowStart)
    }
  }
}
