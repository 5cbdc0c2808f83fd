// Committed data changes (platform/db/changes.ts) shared by the instances of one cloud: each one
// this instance's database feed announces is published on a Redis channel
// (`data-changes`), and what the other instances publish is delivered to this instance's
// listeners as if it had been written here. So a screen paired, moved or gone offline
// through one instance drops the screen list pages every instance keeps within a Redis
// round trip. While Redis is unreachable, pages run out by themselves
// (SVC_SCREEN_LIST_KEEP_MS).
import { ChangeFeed, type DataChange } from '../db/changes.js'
import { RedisBroadcast } from './RedisBroadcast.js'
import type { RedisClient } from './redis.js'

const strings = (x: unknown): boolean => Array.isArray(x) && x.every((s) => typeof s === 'string')

const isChange = (c: unknown): c is DataChange => {
  const o = c as { kind?: unknown; workspaceId?: unknown; screenIds?: unknown } | null
  if (!o || typeof o !== 'object') return false
  if (o.kind === 'workspaceScreens') return typeof o.workspaceId === 'string'
  return o.kind === 'screens' && strings(o.screenIds)
}

export class RedisDataChanges {
  private readonly remote = new ChangeFeed()
  private readonly channel: RedisBroadcast<DataChange>
  private readonly unsubscribe: () => void

  constructor(
    redis: RedisClient,
    private readonly local: ChangeFeed,
  ) {
    this.channel = new RedisBroadcast(redis, 'data-changes', isChange, (c) => this.remote.emit(c))
    this.unsubscribe = local.subscribe((c) => this.channel.publish(c))
  }

  /** Listens to this instance's changes and the other instances'; returns the function that unsubscribes. */
  subscribe(listener: (change: DataChange) => void): () => void {
    const a = this.local.subscribe(listener)
    const b = this.remote.subscribe(listener)
    return () => {
      a()
      b()
    }
  }

  /** Resolves once this instance receives the others' changes (tests; a start does not wait for it). */
  listening(timeoutMs = 5000): Promise<void> {
    return this.channel.listening(timeoutMs)
  }

  close(): void {
    this.unsubscribe()
    this.channel.close()
  }
}
