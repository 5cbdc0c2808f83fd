// Where presence keeps what it knows between events: which connections each screen has
// open and which screens are inside their grace after a drop. The logic (ScreenPresence)
// only speaks this interface, so sharing presence between cloud instances is a change of
// store (Redis: a set of connection keys per screen, a sorted set of `since` per away
// screen), not of rules. Connection keys are unique across instances (`<instance>/<gen>`).

export interface PresenceStore {
  /** Records that this connection of the screen is live. */
  open(screenId: string, key: string): Promise<void>
  /** Forgets the connection; resolves with whether the screen still has a live one. */
  close(screenId: string, key: string): Promise<boolean>
  /** Does the screen hold a live connection (on any instance)? */
  isLive(screenId: string): Promise<boolean>
  /** Starts the grace of a dropped screen; an earlier start is kept. */
  markAway(screenId: string, since: number): Promise<void>
  /** Ends the grace (the screen is back, or it was announced offline). */
  clearAway(screenId: string): Promise<void>
  /** Screens away since `cutoff` or earlier. */
  awayBefore(cutoff: number): Promise<{ screenId: string; since: number }[]>
  /**
   * Drops the connections an instance recorded (it is gone, so are they). A shared store
   * must also do this by itself for an instance that dies without saying so (a lease the
   * instance renews), or its screens would stay online.
   */
  forgetInstance(instance: string): Promise<void>
}

/**
 * One process: everything in memory (lost on restart, which is what a restart means). A
 * screen's live connections are nearly always one: its key alone, a Set only while a
 * take-over has two (a Set per connected screen was about 0.2 KiB of the cloud's memory).
 */
export class InMemoryPresenceStore implements PresenceStore {
  private readonly conns = new Map<string, string | Set<string>>()
  private readonly away = new Map<string, number>()

  async open(screenId: string, key: string): Promise<void> {
    const s = this.conns.get(screenId)
    if (s === undefined) this.conns.set(screenId, key)
    else if (typeof s === 'string') {
      if (s !== key) this.conns.set(screenId, new Set([s, key]))
    } else s.add(key)
  }

  async close(screenId: string, key: string): Promise<boolean> {
    const s = this.conns.get(screenId)
    if (s === undefined) return false
    if (typeof s === 'string') {
      if (s !== key) return true
      this.conns.delete(screenId)
      return false
    }
    s.delete(key)
    if (s.size === 1) this.conns.set(screenId, s.values().next().value!)
    else if (s.size === 0) this.conns.delete(screenId)
    return s.size > 0
  }

  async isLive(screenId: string): Promise<boolean> {
    return this.conns.has(screenId)
  }

  async markAway(screenId: string, since: number): Promise<void> {
    if (!this.away.has(screenId)) this.away.set(screenId, since)
  }

  async clearAway(screenId: string): Promise<void> {
    this.away.delete(screenId)
  }

  async awayBefore(cutoff: number): Promise<{ screenId: string; since: number }[]> {
    return [...this.away].filter(([, since]) => since <= cutoff).map(([screenId, since]) => ({ screenId, since }))
  }

  async forgetInstance(instance: string): Promise<void> {
    const mine = (k: string) => k.startsWith(`${instance}/`)
    for (const [id, s] of this.conns) {
      if (typeof s === 'string') {
        if (mine(s)) this.conns.delete(id)
        continue
      }
      for (const k of s) if (mine(k)) s.delete(k)
      if (s.size === 0) this.conns.delete(id)
      else if (s.size === 1) this.conns.set(id, s.values().next().value!)
    }
  }
}
