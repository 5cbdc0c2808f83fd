// Two instances of one cloud (one database, one Redis) count rate limits together: N
// instances allow what one allows (the workspace limit, registrations, failed
// authentications, log requests per screen). Needs a Redis (SVC_TEST_REDIS_URL).
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { redis, toolTest } from '@svc/shared/testing'
import { buildApp, servicesOf } from '../../src/app.js'
import { testConfig, type Config } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import { freshSqlite } from '../db/sqliteTemplate.js'
import type { Database } from '../../src/platform/db/Database.js'
import { eachEngine } from '../db/engines.js'
import { AUTH_FAILURE_LIMIT } from '../../src/platform/http/authFailures.js'
import { AGENT_LOG_REQUESTS_PER_HOUR } from '../../src/domains/agentlogs/AgentLogService.js'
import { closeRedis, openRedis, redisReady } from '../../src/platform/cluster/redis.js'

interface Cloud {
  a: FastifyInstance
  b: FastifyInstance
  clock: ManualClock
  apiKey: string
  config: Config
}

/** Two apps on one database and one Redis (a fresh key prefix per test), a workspace and its owner key. */
async function twoInstances(t: Test, overrides: Partial<Config> = {}, redisUrl = process.env.SVC_TEST_REDIS_URL ?? null, shared?: Database): Promise<Cloud> {
  const config = testConfig({ redisUrl, redisPrefix: `svc-test-${randomUUID()}:`, ...overrides })
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  // A database from the engine harness (which closes it), or one in memory.
  const db = shared ?? (await freshSqlite(config.dbBusyTimeoutMs))
  const a = await buildApp(config, { clock, db })
  const b = await buildApp(config, { clock, db })
  t.after(async () => {
    await a.close()
    await b.close()
    if (!shared) await db.close()
  })
  await a.ready()
  await b.ready()
  const ws = await servicesOf(a).workspaces.create('Shared', 'us')
  const { secret } = await servicesOf(a).apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
  return { a, b, clock, apiKey: secret, config }
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

/** A screen paired through A, as a device pairs: its id and device credential (HTTP Basic). */
async function pairedScreen(c: Cloud) {
  const reg = (await c.a.inject({ method: 'POST', url: '/v1/devices/register', payload: {} })).json().data
  const pair = await c.a.inject({
    method: 'POST',
    url: '/v1/screens/pair',
    headers: { authorization: `Bearer ${c.apiKey}` },
    payload: { code: reg.pairingCode, name: 'Lobby' },
  })
  const poll = (
    await c.a.inject({ method: 'GET', url: `/v1/devices/register/${reg.registrationId}`, headers: { authorization: `Bearer ${reg.pollSecret}` } })
  ).json().data
  const screenId = pair.json().data.id as string
  return { screenId, device: `Basic ${Buffer.from(`${screenId}:${poll.deviceSecret}`).toString('base64')}` }
}

toolTest(t, redis, 'log requests of a screen are bounded across instances: one open at a time, and the hourly limit counted together', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, {}, undefined, db)
    const s = await pairedScreen(c)
    const ask = (app: FastifyInstance) =>
      app.inject({ method: 'POST', url: `/v1/screens/${s.screenId}/logs`, headers: { authorization: `Bearer ${c.apiKey}` } })
    const answer = (app: FastifyInstance, id: string) =>
      app.inject({
        method: 'PUT',
        url: `/v1/devices/agent-logs/${id}`,
        headers: { authorization: s.device, 'content-type': 'application/json' },
        payload: { lines: [] },
      })

    // Another screen asked on both at once: one request opens, the other ask is told about it.
    const racing = await pairedScreen(c)
    const both = await Promise.all(
      [c.a, c.b].map((app) => app.inject({ method: 'POST', url: `/v1/screens/${racing.screenId}/logs`, headers: { authorization: `Bearer ${c.apiKey}` } })),
    )
    t.same(both.map((r) => r.statusCode).sort(), [202, 409], 'asked on A and B at once: one opens')

    const open = await ask(c.a)
    t.equal(open.statusCode, 202)
    const onB = await ask(c.b)
    t.match(
      { status: onB.statusCode, body: onB.json() },
      { status: 409, body: { error: 'conflict', agentLogId: open.json().data.id } },
      'B sees the request A opened',
    )
    t.equal((await answer(c.b, open.json().data.id)).statusCode, 200)

    // Asks alternate between the instances, each answered on the other one (the first is counted already).
    const codes: number[] = [202]
    for (let i = 1; i < AGENT_LOG_REQUESTS_PER_HOUR + 2; i++) {
      const res = await ask(i % 2 ? c.b : c.a)
      codes.push(res.statusCode)
      if (res.statusCode === 202) t.equal((await answer(i % 2 ? c.a : c.b, res.json().data.id)).statusCode, 200)
    }
    t.same(
      codes,
      [...new Array(AGENT_LOG_REQUESTS_PER_HOUR).fill(202), 429, 429],
      `${AGENT_LOG_REQUESTS_PER_HOUR} an hour for the screen, whichever instance takes them`,
    )
    const over = await ask(c.a)
    t.equal(over.statusCode, 429)
    t.equal(over.headers['retry-after'], '3600', 'until the next clock hour (the clock stands at 12:00:00)')
    c.clock.advance(3_600_000)
    t.equal((await ask(c.b)).statusCode, 202, 'the next hour opens on both')
  }),
)

const badKey = (i: number) => `ak_us_live_${String(i).padStart(32, 'x')}`
const fromAddress = (app: FastifyInstance, ip: string, token: string) =>
  app.inject({ method: 'GET', url: '/v1/nodes', remoteAddress: ip, headers: { authorization: `Bearer ${token}` } })

toolTest(t, redis, 'failed authentications from one address are counted across instances, in an expiring key', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, {}, undefined, db)
    const codes: number[] = []
    // Distinct bad keys, alternating instances: each one is a real lookup and a real failure.
    for (let i = 0; i < AUTH_FAILURE_LIMIT; i++) codes.push((await fromAddress(i % 2 ? c.b : c.a, '203.0.113.9', badKey(i))).statusCode)
    t.same(new Set(codes), new Set([401]), `${AUTH_FAILURE_LIMIT} failures, half on each instance, are answered 401`)
    for (const app of [c.a, c.b]) {
      const over = await fromAddress(app, '203.0.113.9', badKey(1000))
      t.equal(over.statusCode, 429, 'the next one is refused on either instance: the count is shared')
      t.match(over.json().message, /failed authentications .* from this address/)
    }
    t.equal((await fromAddress(c.b, '203.0.113.9', c.apiKey)).statusCode, 200, 'a valid key from that address is never held off')
    t.equal((await fromAddress(c.b, '198.51.100.4', c.apiKey)).statusCode, 200, 'another address is unaffected')

    // The count lives in one Redis key for the address and window, which expires with the window.
    const r = openRedis(process.env.SVC_TEST_REDIS_URL!, c.config.redisPrefix)
    t.after(() => closeRedis(r))
    await redisReady(r)
    const keys = await r.keys(`${c.config.redisPrefix}af:203.0.113.9:*`) // KEYS takes no prefix; GET adds it
    t.equal(keys.length, 1, 'one key for the address and token kind in this window')
    t.match(keys[0], /af:203\.0\.113\.9:ak_us_live_:\d+$/)
    const name = keys[0]!.slice(c.config.redisPrefix.length)
    t.equal(Number(await r.get(name)), AUTH_FAILURE_LIMIT + 2, 'every unknown token counted, the two past the limit too')
    const ttl = await r.pttl(name)
    t.ok(ttl > 0 && ttl <= 61_000, `expires with the window (pttl ${ttl})`)

    c.clock.advance(60_000)
    t.equal((await fromAddress(c.a, '203.0.113.9', badKey(7000))).statusCode, 401, 'the next window opens the address on A')
    t.equal((await fromAddress(c.b, '203.0.113.9', badKey(7001))).statusCode, 401, 'and on B')
  }),
)

eachEngine(t, 'without Redis reachable, failed authentications are counted per instance', async (t, db) => {
  const c = await twoInstances(t, {}, 'redis://127.0.0.1:1', db)
  for (let i = 0; i < AUTH_FAILURE_LIMIT; i++) t.equal((await fromAddress(c.a, '203.0.113.10', badKey(i))).statusCode, 401)
  t.equal((await fromAddress(c.a, '203.0.113.10', badKey(999))).statusCode, 429, 'A holds the address off on its own count')
  t.equal((await fromAddress(c.b, '203.0.113.10', badKey(998))).statusCode, 401, 'B has its own count meanwhile')
})

t.test('without Redis reachable, each instance still serves and counts on its own', async (t) => {
  // Port 1 on loopback refuses at once: the shared counter is unavailable.
  const c = await twoInstances(t, { rateLimitPerMinute: 5 }, 'redis://127.0.0.1:1')
  const fromA = [] as number[]
  for (let i = 0; i < 6; i++) fromA.push((await get(c.a, '/v1/nodes', c.apiKey)).statusCode)
  t.same(fromA, [200, 200, 200, 200, 200, 429], 'A falls back to its own window')
  t.equal((await get(c.b, '/v1/nodes', c.apiKey)).statusCode, 200, 'B has its own window meanwhile')
})
