// The places event streams hold: at most `perWorkspace` open streams per workspace and
// `perCredential` per credential (an API key with its OAuth access tokens; a user across
// their sessions), so one credential cannot take a workspace's places, and a stream that
// ends (its client left, its credential was revoked) gives its place back at once.
//
// Across the instances of one cloud (SVC_REDIS_URL) the places are counted in Redis: a
// sorted set per workspace and per credential (`events:streams:w:<id>`, `…:c:<ref>`) holds
// each open stream with the time its lease runs out. The instance holding a stream renews
// its lease every RENEW_MS (LEASE_MS long), so the places of an instance that died come back
// after LEASE_MS. Taking a place checks both bounds and adds the stream in one script.
// When Redis does not answer, each instance counts the streams it holds (as one instance does).
import type { Clock } from '../../platform/clock.js'
import type { RedisClient } from '../../platform/cluster/redis.js'

export const LEASE_MS = 120_000
export const RENEW_MS = 30_000

export interface SlotLimits {
  perWorkspace: number
  perCredential: number
}

/** One stream's place: its own id, its workspace and its credential (`apikey:<id>` or the user id). */
export interface Slot {
  id: string
  workspaceId: string
  credential: string
}

/** Which bound refused a place (null: it was taken). */
export type SlotRefusal = 'workspace' | 'credential' | null

const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 0
`

const workspaceKey = (id: string) => `events:streams:w:${id}`
const credentialKey = (ref: string) => `events:streams:c:${ref}`

export class StreamSlots {
  private readonly byWorkspace = new Map<string, number>()
  private readonly byCredential = new Map<string, number>()
  /** Places held here and recorded in Redis (renewed until released). */
  private readonly shared = new Map<string, Slot>()

  constructor(
    readonly limits: SlotLimits,
    private readonly clock: Clock,
    private readonly redis: RedisClient | null,
    private readonly log: { warn(obj: unknown, msg: string): void },
  ) {}

  /** Takes a place for `s`, or says which bound is full. */
  async take(s: Slot): Promise<SlotRefusal> {
    const w = this.byWorkspace.get(s.workspaceId) ?? 0
    const c = this.byCredential.get(s.credential) ?? 0
    if (w >= this.limits.perWorkspace) return 'workspace'
    if (c >= this.limits.perCredential) return 'credential'
    // Held here before Redis answers, so streams opening together on this instance count each other.
    this.byWorkspace.set(s.workspaceId, w + 1)
    this.byCredential.set(s.credential, c + 1)
    if (!this.redis) return null
    const now = this.clock.now().getTime()
    let answer: unknown
    try {
      answer = await this.redis.eval(
        TAKE,
        2,
        workspaceKey(s.workspaceId),
        credentialKey(s.credential),
        now,
        now + LEASE_MS,
        this.limits.perWorkspace,
        this.limits.perCredential,
        s.id,
        LEASE_MS,
      )
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'event streams: redis did not answer; counting this instance only')
      return null
    }
    if (answer === 0) {
      this.shared.set(s.id, s)
      return null
    }
    this.drop(s)
    return answer === 1 ? 'workspace' : 'credential'
  }

  /** Gives the place of `s` back: here at once, in Redis when the promise settles (it never rejects). */
  async release(s: Slot): Promise<void> {
    this.drop(s)
    if (!this.shared.delete(s.id) || !this.redis) return
    await this.redis
      .multi()
      .zrem(workspaceKey(s.workspaceId), s.id)
      .zrem(credentialKey(s.credential), s.id)
      .exec()
      .catch(() => {
        // Its lease runs out by itself.
      })
  }

  /** Extends the lease of every place held here in Redis. */
  async renew(): Promise<void> {
    if (!this.redis || !this.shared.size) return
    const until = this.clock.now().getTime() + LEASE_MS
    const m = this.redis.multi()
    for (const s of this.shared.values()) {
      m.zadd(workspaceKey(s.workspaceId), 'XX', until, s.id).pexpire(workspaceKey(s.workspaceId), LEASE_MS)
      m.zadd(credentialKey(s.credential), 'XX', until, s.id).pexpire(credentialKey(s.credential), LEASE_MS)
    }
    await m.exec().catch((err: Error) => this.log.warn({ err: err.message }, 'event streams: renewing stream leases in redis failed'))
  }

  private drop(s: Slot): void {
    const dec = (m: Map<string, number>, k: string) => {
      const left = (m.get(k) ?? 1) - 1
      if (left > 0) m.set(k, left)
      else m.delete(k)
    }
    dec(this.byWorkspace, s.workspaceId)
    dec(this.byCredential, s.credential)
  }
}
