// aedes' message bus for a cloud of several instances: mqemitter-redis, with every channel
// name under the cloud's Redis prefix (SVC_REDIS_PREFIX), so one Redis can carry several
// clouds. While Redis is away the bus queues its commands and resumes when it is back
// (broker messages wait meanwhile; the database still rebuilds each device's state when it
// subscribes); the outage is logged once, not thrown.
import type { Redis } from 'ioredis'
import type mqemitterRedis from 'mqemitter-redis'
import { lazyRequire } from '../lazyRequire.js'

const ioredis = lazyRequire<typeof import('ioredis')>('ioredis')
const mqemitterRedisModule = lazyRequire<typeof mqemitterRedis>('mqemitter-redis')

type Bus = ReturnType<typeof mqemitterRedis> & { state: NodeJS.EventEmitter }
type PrefixedBus = new (prefix: string, opts: { subConn: Redis; pubConn: Redis }) => Bus

export function clusterBus(redisUrl: string, prefix: string, log: { warn(obj: object, msg: string): void }): Bus {
  const Prefixed = (mqemitterRedisModule() as unknown as { MQEmitterRedisPrefix: PrefixedBus }).MQEmitterRedisPrefix
  const conn = () => quitQuietly(new (ioredis().Redis)(redisUrl, { maxRetriesPerRequest: null, retryStrategy: (times) => Math.min(times * 200, 5000) }))
  const bus = new Prefixed(`${prefix}mq:`, { subConn: conn(), pubConn: conn() })
  let warned = false
  bus.state.on('error', (err: Error) => {
    if (!warned) log.warn({ err: err.message }, 'redis unavailable; broker messages between instances wait for it')
    warned = true
  })
  bus.state.on('subConnect', () => {
    warned = false
  })
  return bus
}

/**
 * mqemitter-redis closes its two connections with `quit()` and leaves the promises alone;
 * ioredis rejects a quit ("Connection is closed") when commands are still queued as the
 * socket closes, and that unhandled rejection ended a process (seen once in the test suite,
 * closing a cloud of two instances). The bus waits for the connections' `end` either way.
 */
function quitQuietly(conn: Redis): Redis {
  const quit = conn.quit.bind(conn)
  conn.quit = ((...args: Parameters<Redis['quit']>) => {
    const p = quit(...args)
    p.catch(() => undefined)
    return p
  }) as Redis['quit']
  return conn
}
