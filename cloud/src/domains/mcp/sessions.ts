// MCP sessions (`Mcp-Session-Id`) live in this process's memory, bounded three ways so
// none can leak: a session idle for `idleMs` (no request in flight) is closed; a caller
// holds at most `maxPerCaller` sessions and the process at most `maxSessions`, the least
// recently used one being closed to make room. A session belongs to the caller that opened
// it (workspace + key or user): another caller's request for it finds nothing.
// Time comes from the injected clock; expired sessions are swept on every access.
//
// Across the instances of one cloud (SVC_REDIS_URL), a session is a record in Redis
// (McpSessionDirectory): its caller and the `initialize` it began with. Any instance that
// gets a request for a session it does not hold rebuilds the session's MCP server from
// that record (replaying the `initialize`), so a session id works on every instance and no
// load-balancer stickiness is needed. The record expires after `idleMs` without use; the
// per-caller bound is kept there too (the least recently used record goes), and a DELETE on
// any instance ends the session everywhere: an instance that still holds the session's
// server checks the record on every request and closes its copy when the record is gone.
// When Redis does not answer, each instance falls back to the sessions it holds.
import type { Clock } from '../../platform/clock.js'
import type { RedisClient } from '../../platform/cluster/redis.js'

export interface McpSessionLimits {
  idleMs: number
  maxSessions: number
  maxPerCaller: number
}

export const MCP_SESSION_LIMITS: McpSessionLimits = { idleMs: 30 * 60_000, maxSessions: 1000, maxPerCaller: 10 }

export interface Closable {
  close(): Promise<void> | void
}

interface Entry<T> {
  caller: string
  value: T
  lastUsedAt: number
  inflight: number
}

export class McpSessionStore<T extends Closable> {
  /** Oldest use first: every use moves a session to the end. */
  private readonly sessions = new Map<string, Entry<T>>()

  constructor(
    private readonly clock: Clock,
    readonly limits: McpSessionLimits = MCP_SESSION_LIMITS,
  ) {}

  get size(): number {
    return this.sessions.size
  }

  /** The caller's session `id`, or null (unknown, expired, closed or another caller's). */
  get(id: string, caller: string): T | null {
    this.sweep()
    const e = this.sessions.get(id)
    if (!e || e.caller !== caller) return null
    return e.value
  }

  /** Adds a session, closing the least recently used ones over the limits first. */
  add(id: string, caller: string, value: T): void {
    this.sweep()
    const mine = [...this.sessions].filter(([, e]) => e.caller === caller)
    while (mine.length >= this.limits.maxPerCaller) this.close(mine.shift()![0])
    while (this.sessions.size >= this.limits.maxSessions) this.close(this.sessions.keys().next().value!)
    this.sessions.set(id, { caller, value, lastUsedAt: this.clock.now().getTime(), inflight: 0 })
  }

  /** Marks a request to `id` as running: the session does not expire under it. */
  begin(id: string): void {
    const e = this.touch(id)
    if (e) e.inflight++
  }

  end(id: string): void {
    const e = this.touch(id)
    if (e) e.inflight = Math.max(0, e.inflight - 1)
  }

  /** Forgets `id` without closing it (it closed itself). */
  forget(id: string): void {
    this.sessions.delete(id)
  }

  close(id: string): void {
    const e = this.sessions.get(id)
    if (!e) return
    this.sessions.delete(id)
    void Promise.resolve()
      .then(() => e.value.close())
      .catch(() => undefined)
  }

  /** Closes every session idle for longer than `idleMs`. */
  sweep(): void {
    const cutoff = this.clock.now().getTime() - this.limits.idleMs
    for (const [id, e] of this.sessions) {
      if (e.lastUsedAt > cutoff) break
      if (e.inflight === 0) this.close(id)
    }
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()]
    this.sessions.clear()
    await Promise.all(all.map((e) => Promise.resolve(e.value.close()).catch(() => undefined)))
  }

  private touch(id: string): Entry<T> | undefined {
    const e = this.sessions.get(id)
    if (!e) return undefined
    e.lastUsedAt = this.clock.now().getTime()
    this.sessions.delete(id)
    this.sessions.set(id, e)
    return e
  }
}

/** What every instance needs to continue a session: whose it is and how it began. */
export interface McpSessionRecord {
  caller: string
  /** The params of the session's `initialize` request. */
  init: unknown
}

/** Where the sessions of a cloud are recorded. Each method resolves `undefined` when the directory cannot answer. */
export interface McpSessionDirectory {
  /** Records a new session, dropping the caller's least recently used records over `maxPerCaller`. */
  add(id: string, record: McpSessionRecord): Promise<void>
  /** The session's record (its idle expiry starts again), or null when the session ended, expired or was evicted. */
  use(id: string): Promise<McpSessionRecord | null | undefined>
  /** Ends the session on every instance. */
  remove(id: string, caller: string): Promise<void>
}

/**
 * Sessions in Redis: `mcp:s:<id>` holds the record (expiring after `idleMs` without use) and
 * `mcp:c:<caller>` the caller's session ids scored by last use, for the per-caller bound.
 * Uses are ordered by a counter in Redis (`mcp:seq`), not by the instances' clocks.
 */
export class RedisMcpSessionDirectory implements McpSessionDirectory {
  constructor(
    private readonly redis: RedisClient,
    readonly limits: McpSessionLimits = MCP_SESSION_LIMITS,
  ) {}

  private static session = (id: string) => `mcp:s:${id}`
  private static caller = (caller: string) => `mcp:c:${caller}`

  async add(id: string, record: McpSessionRecord): Promise<void> {
    const owned = RedisMcpSessionDirectory.caller(record.caller)
    try {
      const seq = await this.redis.incr('mcp:seq')
      const res = await this.redis
        .multi()
        .set(RedisMcpSessionDirectory.session(id), JSON.stringify(record), 'PX', this.limits.idleMs)
        .zadd(owned, seq, id)
        .pexpire(owned, this.limits.idleMs)
        .zcard(owned)
        .exec()
      const over = Number(res?.[3]?.[1] ?? 0) - this.limits.maxPerCaller
      if (over <= 0) return
      // Least recently used first (never the session just opened).
      const evicted = (await this.redis.zrange(owned, '0', '-1')).filter((x) => x !== id).slice(0, over)
      if (evicted.length)
        await this.redis
          .multi()
          .zrem(owned, ...evicted)
          .del(...evicted.map(RedisMcpSessionDirectory.session))
          .exec()
    } catch {
      // The session still works on this instance.
    }
  }

  async use(id: string): Promise<McpSessionRecord | null | undefined> {
    try {
      const raw = await this.redis.getex(RedisMcpSessionDirectory.session(id), 'PX', this.limits.idleMs)
      if (raw === null) return null
      const record = JSON.parse(raw) as McpSessionRecord
      const owned = RedisMcpSessionDirectory.caller(record.caller)
      const seq = await this.redis.incr('mcp:seq')
      await this.redis.multi().zadd(owned, 'XX', seq, id).pexpire(owned, this.limits.idleMs).exec()
      return record
    } catch {
      return undefined
    }
  }

  async remove(id: string, caller: string): Promise<void> {
    try {
      await this.redis.multi().del(RedisMcpSessionDirectory.session(id)).zrem(RedisMcpSessionDirectory.caller(caller), id).exec()
    } catch {
      // Expires on its own.
    }
  }
}
