// Two instances of one cloud (one database, one Redis) count rate limits together: N
// instances allow what one allows. Needs a Redis (SVC_TEST_REDIS_URL).
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { redis, toolTest } from '@svc/shared/testing'
import { buildApp } from '../../src/app.js'
import { testConfig, type Config } from '../../src/config.js'
import { ManualClock } from '../../src/clock.js'
import { openDatabase } from '../../src/db/open.js'

interface Cloud {
  a: FastifyInstance
  b: FastifyInstance
  clock: ManualClock
  apiKey: string
}

/** Two apps on one database and one Redis (a fresh key prefix per test), a workspace and its owner key. */
async function twoInstances(t: Test, overrides: Partial<Config> = {}, redisUrl = process.env.SVC_TEST_REDIS_URL ?? null): Promise<Cloud> {
  const config = testConfig({ redisUrl, redisPrefix: `svc-test-${randomUUID()}:`, ...overrides })
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const db = await openDatabase(config)
  const a = await buildApp(config, { clock, db })
  const b = await buildApp(config, { clock, db })
  t.after(async () => {
    await a.close()
    await b.close()
    await db.close()
  })
  await a.ready()
  await b.ready()
  const ws = await a.services.workspaces.create('Shared', 'us')
  const { secret } = await a.services.apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
  return { a, b, clock, apiKey: secret }
}

function get(app: FastifyInstance, url: string, token: string) {
  return app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })
}

toolTest(t, redis, 'the workspace limit is counted across instances: 80 calls split over A and B under a limit of 60 get 20 429s', async (t) => {
  const c = await twoInstances(t, { rateLimitPerMinute: 60 })
  const codes: number[] = []
  for (let i = 0; i < 80; i++) codes.push((await get(i % 2 ? c.b : c.a, '/v1/nodes', c.apiKey)).statusCode)
  t.equal(codes.filter((s) => s === 200).length, 60)
  t.equal(codes.filter((s) => s === 429).length, 20)
  t.same(codes.slice(60), new Array(20).fill(429), 'the 61st call and every one after it is refused, whichever instance answers')
  // The headers tell the caller the shared count.
  c.clock.advance(60_000)
  const fresh = await get(c.b, '/v1/nodes', c.apiKey)
  t.equal(fresh.statusCode, 200)
  t.equal(fresh.headers['ratelimit-remaining'], '59', 'a new clock-aligned window starts on both instances')
})

toolTest(t, redis, 'the registration limit per address is counted across instances', async (t) => {
  const c = await twoInstances(t)
  const codes: number[] = []
  for (let i = 0; i < 40; i++) {
    const res = await (i % 2 ? c.b : c.a).inject({ method: 'POST', url: '/v1/devices/register', payload: {}, remoteAddress: '203.0.113.7' })
    codes.push(res.statusCode)
  }
  t.equal(codes.filter((s) => s === 429).length, 10, '30 registrations a minute from one address, whichever instance takes them')
  t.equal(codes.filter((s) => s === 201).length, 30)
})

t.test('without Redis reachable, each instance still serves and counts on its own', async (t) => {
  // Port 1 on loopback refuses at once: the shared counter is unavailable.
  const c = await twoInstances(t, { rateLimitPerMinute: 5 }, 'redis://127.0.0.1:1')
  const fromA = [] as number[]
  for (let i = 0; i < 6; i++) fromA.push((await get(c.a, '/v1/nodes', c.apiKey)).statusCode)
  t.same(fromA, [200, 200, 200, 200, 200, 429], 'A falls back to its own window')
  t.equal((await get(c.b, '/v1/nodes', c.apiKey)).statusCode, 200, 'B has its own window meanwhile')
})
