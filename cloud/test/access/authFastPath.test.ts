// The authenticated path answered without waiting (cached principal, workspace row and
// in-memory counters) keeps every behaviour of the full path: rate-limit headers and 429s,
// the failed-authentication gate, the envelope, and a /v1/me answer that follows the
// principal and the workspace row (kept per principal, dropped with them). Across two
// instances joined by Redis, a revoke or a workspace change through one is seen by the
// other at once, without waiting for its cache to run out (the clock does not move).
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { PERMISSIONS } from '@svc/shared'
import { HANG_GUARD_MS, redis, toolTest } from '@svc/shared/testing'
import { countReads, makeKey } from '../helpers.js'
import { eachEngine, forEngines } from '../db/engines.js'
import { buildApp, servicesOf } from '../../src/app.js'
import { testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import type { Database } from '../../src/platform/db/Database.js'
import { WORKSPACE_TTL_MS } from '../../src/domains/account/WorkspaceService.js'
import { AUTH_FAILURE_LIMIT } from '../../src/platform/http/authFailures.js'
import { RedisCredentialChanges } from '../../src/domains/access/RedisCredentialChanges.js'

const me = (app: FastifyInstance, token: string, remoteAddress?: string) =>
  app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token}` }, ...(remoteAddress ? { remoteAddress } : {}) })

forEngines(t, (t, build) => {
  t.test('a warm /v1/me reads nothing, counts the rate limit and answers what the principal and workspace say', async (t) => {
    const h = await build(t, { rateLimitPerMinute: 1000 })
    const { apiKey, workspaceId } = await h.workspace('Alpha')
    const limited = await makeKey(h, apiKey, ['screen.view', 'node.view'])
    const first = await me(h.app, apiKey)
    t.equal(first.statusCode, 200)
    t.equal(first.headers['content-type'], 'application/json; charset=utf-8')
    const reads = countReads(h)
    const remaining: number[] = []
    const ids = new Set<string>()
    for (let i = 0; i < 5; i++) {
      const res = await me(h.app, apiKey)
      t.equal(res.statusCode, 200)
      t.equal(res.body, first.body, 'the same answer, byte for byte')
      t.equal(res.headers['ratelimit-limit'], '1000')
      t.equal(res.headers['ratelimit-policy'], '1000;w=60')
      t.ok(Number(res.headers['ratelimit-reset']) >= 1)
      remaining.push(Number(res.headers['ratelimit-remaining']))
      ids.add(String(res.headers['x-svc-request-id']))
    }
    t.equal(reads.n, 0, 'principal, workspace row and answer all come from memory')
    t.same(remaining, [997, 996, 995, 994, 993], 'each request is counted (after the key made in the setup and the first call)')
    t.equal(ids.size, 5, 'a request id of its own on every answer')
    for (const id of ids) t.match(id, /^req_[0-9a-f]{32}$/)
    const body = first.json().data
    t.same(body.workspace, { id: workspaceId, name: 'Alpha' })
    t.equal(body.grant, 'all')
    t.same(body.permissions, [...PERMISSIONS])
    t.equal(body.actor.kind, 'key')

    const other = (await me(h.app, limited.secret)).json().data
    t.same([...other.grant].sort(), ['node.view', 'screen.view'], "another key's answer is its own")
    t.same(other.permissions, ['node.view', 'screen.view'])
    t.equal((await me(h.app, apiKey)).json().data.grant, 'all', 'and the first key still gets its own')

    // A workspace change announced through the service shows on the very next request.
    await servicesOf(h.app).db.run('UPDATE workspaces SET name = ? WHERE id = ?', ['Beta', workspaceId])
    t.equal((await me(h.app, apiKey)).json().data.workspace.name, 'Alpha', 'a write nobody announced waits for the row to run out')
    servicesOf(h.app).workspaces.changed(workspaceId)
    t.equal((await me(h.app, apiKey)).json().data.workspace.name, 'Beta', 'announced: at once')
    await servicesOf(h.app).db.run('UPDATE workspaces SET name = ? WHERE id = ?', ['Gamma', workspaceId])
    h.clock.advance(WORKSPACE_TTL_MS)
    t.equal((await me(h.app, apiKey)).json().data.workspace.name, 'Gamma', 'not announced: once the row ran out')
  })

  t.test('revoked on the warm path: refused on the very next request, with the envelope', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    const k = await makeKey(h, apiKey, ['node.view'])
    for (let i = 0; i < 3; i++) t.equal((await me(h.app, k.secret)).statusCode, 200)
    t.equal((await h.req('POST', `/v1/api-keys/${k.id}/revoke`, apiKey)).statusCode, 200)
    const res = await me(h.app, k.secret)
    t.equal(res.statusCode, 401)
    t.same(Object.keys(res.json()).sort(), ['error', 'message'])
    t.equal(res.json().error, 'invalid_credentials')
    t.ok(res.headers['x-svc-request-id'], 'the request id is on errors too')
  })

  t.test('the workspace limit answers 429 on the warm path, with its headers', async (t) => {
    const h = await build(t, { rateLimitPerMinute: 3 })
    const { apiKey } = await h.workspace()
    // The setup made no call; the first request fills the caches.
    const codes: number[] = []
    for (let i = 0; i < 3; i++) codes.push((await me(h.app, apiKey)).statusCode)
    const over = await me(h.app, apiKey)
    t.same(codes, [200, 200, 200])
    t.equal(over.statusCode, 429)
    t.equal(over.json().error, 'rate_limited')
    t.equal(typeof over.json().message, 'string')
    t.equal(over.headers['ratelimit-remaining'], '0')
    t.equal(over.headers['ratelimit-limit'], '3')
    t.ok(Number(over.headers['retry-after']) >= 1)
    h.clock.advance(60_000)
    t.equal((await me(h.app, apiKey)).statusCode, 200, 'the next window starts afresh')
  })

  t.test('a warm, valid key is answered from an address past the failed-authentication limit', async (t) => {
    const h = await build(t)
    const { apiKey } = await h.workspace()
    t.equal((await me(h.app, apiKey, '203.0.113.9')).statusCode, 200, 'warm')
    for (let i = 0; i <= AUTH_FAILURE_LIMIT; i++) await me(h.app, `ak_us_live_${String(i).padStart(32, 'x')}`, '203.0.113.9')
    t.equal((await me(h.app, `ak_us_live_${'x'.repeat(33)}`, '203.0.113.9')).statusCode, 429, 'unknown keys are held off')
    const res = await me(h.app, apiKey, '203.0.113.9')
    t.equal(res.statusCode, 200, 'the valid key is not')
  })
})

/** A key made through the API of `app` by `creator`. */
async function createKey(app: FastifyInstance, creator: string, permissions: string[]): Promise<{ id: string; secret: string }> {
  const res = await app.inject({ method: 'POST', url: '/v1/api-keys', headers: { authorization: `Bearer ${creator}` }, payload: { name: 'k', permissions } })
  if (res.statusCode !== 201) throw new Error(`create key: ${res.statusCode} ${res.body}`)
  return res.json().data
}

/** Two apps on one database and one Redis (a fresh key prefix), a workspace and its owner key. */
async function twoInstances(t: Test, db: Database) {
  const config = testConfig({ redisUrl: process.env.SVC_TEST_REDIS_URL ?? null, redisPrefix: `svc-test-${randomUUID()}:` })
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const a = await buildApp(config, { clock, db })
  const b = await buildApp(config, { clock, db })
  t.after(async () => {
    await a.close()
    await b.close()
  })
  await a.ready()
  await b.ready()
  for (const app of [a, b]) {
    const changes = servicesOf(app).credentialChanges
    t.ok(changes instanceof RedisCredentialChanges, 'clustered instances share credential changes')
    await (changes as RedisCredentialChanges).listening()
  }
  const ws = await servicesOf(a).workspaces.create('Shared', 'us')
  const { secret } = await servicesOf(a).apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
  return { a, b, clock, apiKey: secret, workspaceId: ws.id }
}

/** Polls `f` until it is true (real time: Redis delivers the change); false after a hang guard (HANG_GUARD_MS). */
async function soon(f: () => Promise<boolean>): Promise<boolean> {
  const until = Date.now() + HANG_GUARD_MS
  while (Date.now() < until) {
    if (await f()) return true
    await new Promise((r) => setTimeout(r, 10))
  }
  return false
}

toolTest(t, redis, 'across instances: a revoke through A is refused by B at once, without its cache running out', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db)
    const k = await createKey(c.a, c.apiKey, ['node.view'])
    t.equal((await me(c.b, k.secret)).statusCode, 200, 'B has the key cached')
    t.equal((await me(c.b, k.secret)).statusCode, 200)
    const revoked = await c.a.inject({ method: 'POST', url: `/v1/api-keys/${k.id}/revoke`, headers: { authorization: `Bearer ${c.apiKey}` } })
    t.equal(revoked.statusCode, 200)
    t.equal((await me(c.a, k.secret)).statusCode, 401, 'A: on the next request')
    t.ok(await soon(async () => (await me(c.b, k.secret)).statusCode === 401), 'B: within the Redis round trip (the clock did not move)')
    t.equal((await me(c.b, c.apiKey)).statusCode, 200, 'other keys are unaffected on B')
  }),
)

toolTest(t, redis, 'across instances: a workspace change announced on A is in B’s /v1/me at once', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db)
    t.equal((await me(c.b, c.apiKey)).json().data.workspace.name, 'Shared')
    await servicesOf(c.a).db.run('UPDATE workspaces SET name = ? WHERE id = ?', ['Renamed', c.workspaceId])
    servicesOf(c.a).workspaces.changed(c.workspaceId)
    t.ok(await soon(async () => (await me(c.b, c.apiKey)).json().data.workspace.name === 'Renamed'), 'B answers the new name')
  }),
)

t.test('Redis unreachable: changes still reach this instance’s own caches', async (t) => {
  const config = testConfig({ redisUrl: 'redis://127.0.0.1:1', redisPrefix: `svc-test-${randomUUID()}:` })
  const app = await buildApp(config, { clock: new ManualClock('2026-06-01T12:00:00.000Z') })
  t.after(() => app.close())
  await app.ready()
  const ws = await servicesOf(app).workspaces.create('Alone', 'us')
  const { secret } = await servicesOf(app).apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
  const k = await createKey(app, secret, ['node.view'])
  t.equal((await me(app, k.secret)).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: `/v1/api-keys/${k.id}/revoke`, headers: { authorization: `Bearer ${secret}` } })).statusCode, 200)
  t.equal((await me(app, k.secret)).statusCode, 401)
})
