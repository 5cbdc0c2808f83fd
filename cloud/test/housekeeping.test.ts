// The hourly housekeeper removes what nobody needs any more, and only that.
import { servicesOf } from '../src/app.js'
import t from 'tap'
import { build } from './helpers.js'
import { wireDomains, workspace } from './domains.js'
import { loadConfig } from '../src/config.js'

t.test('expired idempotency keys, dead pairing codes and old sent mail are purged; live rows stay', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const db = servicesOf(h.app).db
  const count = async (sql: string) => (await db.get<{ n: number }>(sql))!.n

  // A pairing code nobody claims, an idempotent create, a mail that went out.
  const dead = (await h.req('POST', '/v1/devices/register', null, {})).json().data
  t.equal((await h.req('POST', '/v1/nodes', apiKey, { name: 'A' }, { 'idempotency-key': 'k1' })).statusCode, 201)
  await db.run("INSERT INTO outbox (id, workspace_id, to_addresses, subject, body, created_at, sent_at) VALUES ('m1', NULL, '[]', 's', 'b', ?, ?)", [
    h.clock.now().toISOString(),
    h.clock.now().toISOString(),
  ])
  await db.run("INSERT INTO outbox (id, workspace_id, to_addresses, subject, body, created_at) VALUES ('m2', NULL, '[]', 'unsent', 'b', ?)", [
    h.clock.now().toISOString(),
  ])

  const housekeeper = h.app.workers.housekeeper
  await housekeeper.runOnce()
  t.equal(await count('SELECT COUNT(*) AS n FROM device_registrations'), 1, 'a fresh code stays')
  t.equal(await count('SELECT COUNT(*) AS n FROM idempotency_keys'), 1)
  t.equal(await count('SELECT COUNT(*) AS n FROM outbox'), 2)

  h.clock.advance(31 * 86_400_000)
  const fresh = (await h.req('POST', '/v1/devices/register', null, {})).json().data
  await housekeeper.runOnce()
  const left = await db.all<{ id: string }>('SELECT id FROM device_registrations')
  t.same(
    left.map((r) => r.id),
    [fresh.registrationId],
    `the dead code ${dead.registrationId} is gone, the fresh one stays`,
  )
  t.equal(await count('SELECT COUNT(*) AS n FROM idempotency_keys'), 0)
  t.same(
    (await db.all<{ id: string }>('SELECT id FROM outbox')).map((r) => r.id),
    ['m2'],
    'unsent mail stays for an operator to see',
  )
})

// The events module alone (wireDomains): the subject is its outbox's clean-up task.
t.test('dispatched domain events are purged after a week; pending ones stay', async (t) => {
  const d = await wireDomains(t, ['outbox'])
  const { db, clock, housekeeper } = d
  const { outbox } = d.provided
  const workspaceId = await workspace(d)
  const at = clock.now().toISOString()
  const event = (n: number) => ({
    event: 'screen.offline' as const,
    workspaceId,
    occurredAt: at,
    data: { screenId: `scr_${n}`, screenName: `Screen ${n}`, nodeId: null, at },
  })
  await db.transaction((tx) => outbox.recordMany(tx, [event(1), event(2)]))
  t.equal(await outbox.dispatch(), 2)
  await db.transaction((tx) => outbox.record(tx, event(3)))
  const left = async () =>
    (await db.kysely.selectFrom('events_outbox').select(['data', 'dispatched_at']).orderBy('id').execute()).map((r) => [
      Number(JSON.parse(r.data).screenId.slice('scr_'.length)),
      r.dispatched_at !== null,
    ])
  // The third stays pending, as if its dispatcher died before handing it on.
  clock.advance(6 * 86_400_000)
  await housekeeper.runOnce()
  t.same(
    await left(),
    [
      [1, true],
      [2, true],
      [3, false],
    ],
    'nothing younger than a week goes',
  )
  clock.advance(2 * 86_400_000)
  await housekeeper.runOnce()
  t.same(await left(), [[3, false]], 'dispatched events older than a week are gone; the pending one stays')
})

t.test('the housekeeping interval is its own setting, not tied to status measurement', async (t) => {
  t.equal(loadConfig({}).housekeepingIntervalMs, 3_600_000, 'hourly by default')
  t.equal(loadConfig({ SVC_HOUSEKEEPING_INTERVAL_MS: '60000' }).housekeepingIntervalMs, 60_000)
  t.equal(loadConfig({ SVC_STATUS_INTERVAL_MS: '0' }).housekeepingIntervalMs, 3_600_000, 'turning status measurement off leaves housekeeping on')
  t.equal(loadConfig({ SVC_HOUSEKEEPING_INTERVAL_MS: '0', SVC_STATUS_INTERVAL_MS: '60000' }).housekeepingIntervalMs, 0, '0 turns it off')
})
