// Presence shared by the instances of one cloud, in Redis (domains/devicelink/PresenceStore.ts is
// the interface; ScreenPresence keeps the rules). Keys, under the cloud's prefix:
//
//   presence:conns:<screenId>   set of live connection keys `<instance>/<gen>`, any instance
//   presence:inst:<instance>    set of `<screenId> <key>` this instance opened (to forget it)
//   presence:away               sorted set: screens inside their grace, scored by `since` (ms)
//   presence:beats              hash: instance → its last heartbeat (ms)
//
// An instance that stops cleanly forgets its own connections. One that dies does not: every
// instance beats (beat()), and the holder of the presence-sweep lease reaps the instances
// whose beat is older than the dead-after time (reapDead()): their connections go, and their
// screens left with none start their grace from the dead instance's last beat, so they are
// announced offline by the next sweep once that grace has passed, exactly once (the
// transition is a conditional update in the database).
import type { RedisClient } from '../../platform/cluster/redis.js'
import type { PresenceStore } from './PresenceStore.js'

const CONNS = 'presence:conns:'
const INST = 'presence:inst:'
const AWAY = 'presence:away'
const BEATS = 'presence:beats'

const instanceOf = (key: string): string => key.slice(0, key.indexOf('/'))

export class RedisPresenceStore implements PresenceStore {
  constructor(private readonly redis: RedisClient) {}

  async open(screenId: string, key: string): Promise<void> {
    await this.redis
      .multi()
      .sadd(CONNS + screenId, key)
      .sadd(INST + instanceOf(key), `${screenId} ${key}`)
      .exec()
  }

  async close(screenId: string, key: string): Promise<boolean> {
    const r = await this.redis
      .multi()
      .srem(CONNS + screenId, key)
      .srem(INST + instanceOf(key), `${screenId} ${key}`)
      .scard(CONNS + screenId)
      .exec()
    return Number(r?.[2]?.[1] ?? 0) > 0
  }

  async isLive(screenId: string): Promise<boolean> {
    return (await this.redis.scard(CONNS + screenId)) > 0
  }

  async markAway(screenId: string, since: number): Promise<void> {
    await this.redis.zadd(AWAY, 'NX', since, screenId)
  }

  async clearAway(screenId: string): Promise<void> {
    await this.redis.zrem(AWAY, screenId)
  }

  async awayBefore(cutoff: number): Promise<{ screenId: string; since: number }[]> {
    const flat = await this.redis.zrangebyscore(AWAY, '-inf', cutoff, 'WITHSCORES')
    const out: { screenId: string; since: number }[] = []
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ screenId: flat[i]!, since: Number(flat[i + 1]) })
    return out
  }

  async forgetInstance(instance: string): Promise<void> {
    await this.forget(instance)
    await this.redis.hdel(BEATS, instance)
  }

  /** Records that `instance` is alive at `now` (ms). */
  async beat(instance: string, now: number): Promise<void> {
    await this.redis.hset(BEATS, instance, String(now))
  }

  /**
   * Forgets every instance whose last beat is older than `deadAfterMs` before `now`; the
   * screens it leaves without a connection start their grace at its last beat. Answers them.
   */
  async reapDead(now: number, deadAfterMs: number): Promise<{ instance: string; screens: string[] }[]> {
    const beats = await this.redis.hgetall(BEATS)
    const reaped: { instance: string; screens: string[] }[] = []
    for (const [instance, at] of Object.entries(beats)) {
      const last = Number(at)
      if (!(now - last > deadAfterMs)) continue
      const screens = await this.forget(instance)
      const left: string[] = []
      for (const id of screens) if (!(await this.isLive(id))) left.push(id)
      for (const id of left) await this.markAway(id, last)
      // Only now: a reaper that fails half-way finds the instance again next time.
      await this.redis.hdel(BEATS, instance)
      reaped.push({ instance, screens: left })
    }
    return reaped
  }

  /** Drops the instance's connections; answers the screens they belonged to. */
  private async forget(instance: string): Promise<string[]> {
    const entries = await this.redis.smembers(INST + instance)
    const screens = new Set<string>()
    const m = this.redis.multi()
    for (const e of entries) {
      const [screenId, key] = e.split(' ') as [string, string]
      screens.add(screenId)
      m.srem(CONNS + screenId, key)
    }
    m.del(INST + instance)
    await m.exec()
    return [...screens]
  }
}
