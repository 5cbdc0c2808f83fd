// A Redis channel every instance of one cloud publishes on and listens to: what one
// instance publishes reaches the others (not itself: it has acted on it already). The
// channel is named with the key prefix (SVC_REDIS_PREFIX), as Redis does not prefix
// channel names. While Redis is unreachable a publication is lost for the others; each
// user says what bounds the loss (cached entries running out by themselves).
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { RedisClient } from './redis.js'

interface Message<T> {
  /** The publishing instance. */
  from: string
  body: T
}

export class RedisBroadcast<T> {
  private readonly instance = randomBytes(9).toString('base64url')
  private readonly channel: string
  private readonly subscriber: Redis
  private subscribed = false

  constructor(
    private readonly redis: RedisClient,
    name: string,
    /** Checks what another instance sent (a message failing it is ignored). */
    valid: (body: unknown) => body is T,
    /** Receives what the other instances publish. */
    deliver: (body: T) => void,
  ) {
    this.channel = `${redis.options.keyPrefix ?? ''}${name}`
    // A connection in subscriber mode runs no other command: its own.
    this.subscriber = redis.duplicate() as unknown as Redis // (without the cast, comparing ioredis's generic reply mappings costs the type check about a second)
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
      let m: Message<unknown>
      try {
        m = JSON.parse(text) as Message<unknown>
      } catch {
        return
      }
      if (m && m.from !== this.instance && valid(m.body)) deliver(m.body)
    })
  }

  publish(body: T): void {
    const m: Message<T> = { from: this.instance, body }
    void this.redis.publish(this.channel, JSON.stringify(m)).catch(() => undefined)
  }

  /** Resolves once this instance receives the others' publications (tests; a start does not wait for it). */
  async listening(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!this.subscribed) {
      if (Date.now() > deadline) throw new Error(`not subscribed to ${this.channel}`)
      await new Promise((r) => setTimeout(r, 10))
    }
  }

  close(): void {
    this.subscriber.disconnect()
  }
}
