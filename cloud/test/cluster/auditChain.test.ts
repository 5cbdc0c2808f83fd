// The audit log on two instances of one cloud (one database, one Redis): a workspace's
// entries form ONE chain whichever instance records them. Writes sent at once to both
// instances each leave an entry, numbered 1…n without a gap or a repeat, every entry linked
// to the one before, and /verify passes on either instance. (Each append locks its chain's
// head row, so two instances never take the same place in the chain.)
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { redis, toolTest } from '@svc/shared/testing'
import { buildApp, servicesOf } from '../../src/app.js'
import { testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import type { Database } from '../../src/platform/db/Database.js'
import { eachEngine } from '../db/engines.js'

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
  const ws = await servicesOf(a).workspaces.create('Shared', 'us')
  const { secret } = await servicesOf(a).apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
  return { a, b, apiKey: secret, workspaceId: ws.id }
}

const WRITES = 40

toolTest(t, redis, 'writes sent at once to two instances form one chain per workspace', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db)
    const post = (app: FastifyInstance, i: number) =>
      app.inject({ method: 'POST', url: '/v1/nodes', headers: { authorization: `Bearer ${c.apiKey}` }, payload: { name: `Node ${i}` } })
    const answers = await Promise.all(Array.from({ length: WRITES }, (_, i) => post(i % 2 ? c.b : c.a, i)))
    t.same(
      answers.filter((r) => r.statusCode !== 201),
      [],
      'every write succeeded',
    )
    const rows = await db.all<{ seq: unknown; request_id: string; prev_hash: string; hash: string }>(
      'SELECT seq, request_id, prev_hash, hash FROM audit_entries WHERE chain = ? ORDER BY seq',
      [c.workspaceId],
    )
    t.same(
      rows.map((r) => Number(r.seq)),
      Array.from({ length: WRITES }, (_, i) => i + 1),
      'one chain: 1…n, no gap, no repeat',
    )
    t.same(new Set(rows.map((r) => r.request_id)), new Set(answers.map((r) => r.headers['x-svc-request-id'])), 'each write has its entry')
    for (let i = 1; i < rows.length; i++) if (rows[i]!.prev_hash !== rows[i - 1]!.hash) t.fail(`entry ${i + 1} does not link to entry ${i}`)
    for (const app of [c.a, c.b]) {
      const v = await app.inject({ method: 'GET', url: '/v1/audit-log/verify', headers: { authorization: `Bearer ${c.apiKey}` } })
      t.same(v.json(), { ok: true, checked: WRITES, firstBroken: null })
    }
  }),
)
