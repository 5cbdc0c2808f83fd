// Credential changes shared by the instances of one cloud (SVC_REDIS_URL). A change is
// delivered to this instance's caches first, synchronously, as LocalCredentialChanges does,
// then published on a Redis channel; every other instance delivers what it receives to its
// own caches. So a key revoked, rotated or re-granted through one instance (or a workspace
// or user changed) is dropped from every instance's cache within a Redis round trip, not
// after the caches' few seconds. The channel is named with the key prefix
// (SVC_REDIS_PREFIX): Redis does not prefix channel names.
//
// When Redis is unreachable a publication is lost for the other instances; their cached
// entries then run out by themselves (PRINCIPAL_TTL_MS, WORKSPACE_TTL_MS), as before.
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { type CredentialChange, type CredentialChanges, LocalCredentialChanges } from '../services/CredentialChanges.js'
import type { RedisClient } from './redis.js'

const CHANNEL = 'credential-changes'

interface Message {
  /** The publishing instance (it has delivered the change already). */
  from: string
  change: CredentialChange
}

const isChange = (c: unknown): c is CredentialChange => {
  const o = c as { kind?: unknown; ids?: unknown; id?: unknown } | null
  if (!o || typeof o !== 'object') return false
  if (o.kind === 'workspace') return typeof o.id === 'string'
  return (o.kind === 'apiKey' || o.kind === 'user') && Array.isArray(o.ids) && o.ids.every((x) => typeof x === 'string')
}

export class RedisCredentialChanges implements CredentialChanges {
  private readonly local = new LocalCredentialChanges()
  private readonly instance = randomBytes(9).toString('base64url')
  private readonly channel: string
  private readonly subscriber: Redis
  private subscribed = false

  constructor(private readonly redis: RedisClient) {
    this.channel = `${redis.options.keyPrefix ?? ''}${CHANNEL}`
    // A connection in subscriber mode runs no other command: its own.
    this.subscriber = redis.duplicate()
    this.subscriber.on('error', () => undefined)
    this.subscriber.on('close', () => {
      this.subscribed = false
    })
    // Commands fail at once while Redis is away (no offline queue): subscribe whenever ready.
    this.subscriber.on('ready', () => {
      this.subscriber.subscribe(this.channel).then(
        () => {
          this.subscribed = true
        },
        () => undefined,
      )
    })
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return
      let m: Message
      try {
        m = JSON.parse(text) as Message
      } catch {
        return
      }
      if (m.from !== this.instance && isChange(m.change)) this.local.publish(m.change)
    })
  }

  publish(change: CredentialChange): void {
    this.local.publish(change)
    const m: Message = { from: this.instance, change }
    void this.redis.publish(this.channel, JSON.stringify(m)).catch(() => undefined)
  }

  subscribe(listener: (change: CredentialChange) => void): () => void {
    return this.local.subscribe(listener)
  }

  /** Resolves once this instance receives the others' changes (tests; a start does not wait for it). */
  async listening(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!this.subscribed) {
      if (Date.now() > deadline) throw new Error('not subscribed to credential changes')
      await new Promise((r) => setTimeout(r, 10))
    }
  }

  close(): void {
    this.subscriber.disconnect()
  }
}
