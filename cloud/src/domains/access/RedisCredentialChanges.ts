// Credential changes shared by the instances of one cloud (SVC_REDIS_URL). A change is
// delivered to this instance's caches first, synchronously, as LocalCredentialChanges does,
// then published on a Redis channel (`credential-changes`); every other instance delivers
// what it receives to its own caches. So a key revoked, rotated or re-granted through one
// instance (or a workspace or user changed) is dropped from every instance's cache within
// a Redis round trip, not after the caches' few seconds.
//
// When Redis is unreachable a publication is lost for the other instances; their cached
// entries then run out by themselves (PRINCIPAL_TTL_MS, WORKSPACE_TTL_MS), as before.
import { type CredentialChange, type CredentialChanges, LocalCredentialChanges } from './CredentialChanges.js'
import { RedisBroadcast } from '../../platform/cluster/RedisBroadcast.js'
import type { RedisClient } from '../../platform/cluster/redis.js'

const isChange = (c: unknown): c is CredentialChange => {
  const o = c as { kind?: unknown; ids?: unknown; id?: unknown } | null
  if (!o || typeof o !== 'object') return false
  if (o.kind === 'workspace') return typeof o.id === 'string'
  return (o.kind === 'apiKey' || o.kind === 'user') && Array.isArray(o.ids) && o.ids.every((x) => typeof x === 'string')
}

export class RedisCredentialChanges implements CredentialChanges {
  private readonly local = new LocalCredentialChanges()
  private readonly channel: RedisBroadcast<CredentialChange>

  constructor(redis: RedisClient) {
    this.channel = new RedisBroadcast(redis, 'credential-changes', isChange, (c) => this.local.publish(c))
  }

  publish(change: CredentialChange): void {
    this.local.publish(change)
    this.channel.publish(change)
  }

  subscribe(listener: (change: CredentialChange) => void): () => void {
    return this.local.subscribe(listener)
  }

  /** Resolves once this instance receives the others' changes (tests; a start does not wait for it). */
  listening(timeoutMs = 5000): Promise<void> {
    return this.channel.listening(timeoutMs)
  }

  close(): void {
    this.channel.close()
  }
}
