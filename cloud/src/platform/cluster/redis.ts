// The Redis connection that joins the instances of one cloud (SVC_REDIS_URL). Commands
// never wait in an offline queue: when Redis is unreachable they fail at once and each
// caller falls back to its single-instance behaviour (see docs/operator-guide.md
// "Scale-out"), so a Redis outage degrades sharing but never stalls a request.
import type { Redis } from 'ioredis'
import { lazyRequire } from '../lazyRequire.js'

const ioredis = lazyRequire<typeof import('ioredis')>('ioredis')

export type RedisClient = Redis

export interface RedisLog {
  warn(obj: object, msg: string): void
}

/** Opens a client on `url`; every key name gets `prefix` (SVC_REDIS_PREFIX) so one Redis can serve several clouds. */
export function openRedis(url: string, prefix: string, log?: RedisLog): RedisClient {
  const client = new (ioredis().Redis)(url, {
    keyPrefix: prefix,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // Reconnect with a capped backoff; the instance keeps serving meanwhile.
    retryStrategy: (times) => Math.min(times * 200, 5000),
  })
  let warned = false
  client.on('error', (err: Error) => {
    if (!warned) log?.warn({ err: err.message }, 'redis unavailable; shared counters fall back to this instance')
    warned = true
  })
  client.on('ready', () => {
    warned = false
  })
  return client
}

/** Resolves once the client is connected (or rejects after `timeoutMs`). */
export async function redisReady(client: RedisClient, timeoutMs = 5000): Promise<void> {
  if (client.status === 'ready') return
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup()
      reject(new Error(`redis not ready after ${timeoutMs} ms`))
    }, timeoutMs)
    const onReady = (): void => {
      cleanup()
      resolve()
    }
    const cleanup = (): void => {
      clearTimeout(timer)
      client.off('ready', onReady)
    }
    client.on('ready', onReady)
  })
}

/** Closes the client: politely when connected, at once when not (a quit would wait for a reconnect). */
export async function closeRedis(client: RedisClient): Promise<void> {
  if (client.status === 'ready') {
    await client.quit().catch(() => client.disconnect())
  } else client.disconnect()
}

/** Whether the client connects within `timeoutMs`: false at its first connection error (it keeps retrying meanwhile). */
export async function redisReachable(client: RedisClient, timeoutMs = 3000): Promise<boolean> {
  if (client.status === 'ready') return true
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean): void => {
      clearTimeout(timer)
      client.off('ready', onReady)
      client.off('error', onError)
      resolve(ok)
    }
    const onReady = (): void => done(true)
    const onError = (): void => done(false)
    const timer = setTimeout(() => done(false), timeoutMs)
    client.on('ready', onReady)
    client.on('error', onError)
  })
}

/**
 * Counts one hit on a fixed window's key: `INCR` + `PEXPIRE` in one `MULTI`, so the key
 * expires a second after its window. Resolves with the window's count; rejects when Redis
 * does not answer (callers fall back to their own memory).
 */
export async function incrWindow(client: RedisClient, name: string, windowMs: number): Promise<number> {
  const res = await client
    .multi()
    .incr(name)
    .pexpire(name, windowMs + 1000)
    .exec()
  const [err, count] = res?.[0] ?? [new Error('empty reply'), null]
  if (err) throw err
  return Number(count)
}

/** Like incrWindow, adding `n` at once (INCRBY). */
export async function addWindow(client: RedisClient, name: string, n: number, windowMs: number): Promise<number> {
  const res = await client
    .multi()
    .incrby(name, n)
    .pexpire(name, windowMs + 1000)
    .exec()
  const [err, count] = res?.[0] ?? [new Error('empty reply'), null]
  if (err) throw err
  return Number(count)
}
