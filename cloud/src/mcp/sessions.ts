// MCP sessions (`Mcp-Session-Id`) live in this process's memory, bounded three ways so
// none can leak: a session idle for `idleMs` (no request in flight) is closed; a caller
// holds at most `maxPerCaller` sessions and the process at most `maxSessions`, the least
// recently used one being closed to make room. A session belongs to the caller that opened
// it (workspace + key or user): another caller's request for it finds nothing.
// Time comes from the injected clock; expired sessions are swept on every access.
import type { Clock } from '../clock.js'

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
