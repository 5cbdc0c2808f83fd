// The availability history across two instances of one cloud (one database, one Redis, each
// its own broker): a device hopping between A and B leaves one presence history; the hourly
// roll-up runs on one instance at a time (its work lease) however many ask; both answer the
// same report before and after it. A report subscription that falls due is mailed once
// when both instances run the due ones at the same moment. Real MQTT devices, a ManualClock for the times.
// On both engines; needs a Redis (SVC_TEST_REDIS_URL).
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { HANG_GUARD_MS, redis, toolTest } from '@svc/shared/testing'
import { servicesOf } from '../../src/app.js'
import { connectDevice, droppedAtBroker, startCloud, type Cloud, type Device } from '../devicelink/link.js'
import type { Database } from '../../src/platform/db/Database.js'
import { eachEngine } from '../db/engines.js'
import { ManualClock } from '../../src/platform/clock.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'

const GRACE = 5000
const MIN = 60_000
/** A hang guard: what was awaited is named in the failure. */
const GUARD = HANG_GUARD_MS

async function twoClouds(t: Test, db: Database): Promise<{ a: Cloud; b: Cloud; clock: ManualClock }> {
  const config = {
    redisUrl: process.env.SVC_TEST_REDIS_URL ?? null,
    redisPrefix: `svc-test-${randomUUID()}:`,
    screenOfflineGraceMs: GRACE,
    presenceTimers: false,
  }
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const content = new InMemoryContentResolver()
  const a = await startCloud(t, { clock, content, config, deps: { db } })
  const b = await startCloud(t, { clock, content, config, deps: { db }, workspace: { id: a.workspaceId, apiKey: a.apiKey } })
  return { a, b, clock }
}

const mqttUrl = (c: Cloud) => `mqtt://127.0.0.1:${c.running.mqttPort}`
async function settle(...clouds: Cloud[]): Promise<void> {
  for (const c of clouds) await servicesOf(c.running.app).presence.idle()
}

/** Connected to `on` from now for `minutes`, then the link drops and the screen goes offline from the drop. */
async function stint(t: Test, clouds: { a: Cloud; b: Cloud; clock: ManualClock }, on: Cloud, d: Device, minutes: number): Promise<void> {
  const dev = await connectDevice(t, mqttUrl(on), d)
  await dev.next(() => true, GUARD)
  await settle(clouds.a, clouds.b)
  clouds.clock.advance(minutes * MIN)
  await dev.client.endAsync()
  t.ok(await droppedAtBroker(on, d.screenId, GUARD), 'the broker saw the device go (waited up to HANG_GUARD_MS)')
  await settle(clouds.a, clouds.b)
  clouds.clock.advance(GRACE)
  for (const c of [clouds.a, clouds.b]) {
    await servicesOf(c.running.app).clusterPresence?.runOnce()
    await servicesOf(c.running.app).presence.sweep()
  }
  await settle(clouds.a, clouds.b)
  clouds.clock.advance(-GRACE)
}

toolTest(t, redis, 'a device hopping between instances: one history, one roll-up run at a time, the same report on both', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const clouds = await twoClouds(t, db)
    const { a, b, clock } = clouds
    const d = await a.pair('Lobby')
    await stint(t, clouds, b, d, 10) // 12:00–12:10 on B
    clock.advance(10 * MIN)
    await stint(t, clouds, a, d, 10) // 12:20–12:30 on A
    clock.advance(10 * MIN)
    const last = await connectDevice(t, mqttUrl(b), d) // 12:40 on B, still connected
    await last.next(() => true, GUARD)
    await settle(a, b)
    clock.advance(10 * MIN) // 12:50

    const rows = await servicesOf(a.running.app)
      .db.kysely.selectFrom('presence_intervals')
      .select(['started_at', 'ended_at'])
      .where('screen_id', '=', d.screenId)
      .orderBy('started_at')
      .execute()
    t.same(
      rows.map((r) => [r.started_at.slice(11, 16), r.ended_at?.slice(11, 16) ?? null]),
      [
        ['12:00', '12:10'],
        ['12:20', '12:30'],
        ['12:40', null],
      ],
      'one history, whichever instance the device was on',
    )

    const report = async (c: Cloud) => {
      const res = await c.call('GET', `/v1/reports/availability?from=2026-06-01T12:00:00.000Z&to=2026-06-01T13:00:00.000Z`)
      t.equal(res.status, 200, JSON.stringify(res.body))
      return res.body.data.rows[0]
    }
    const want = { windowSeconds: 3000, onlineSeconds: 1800, outages: 2, longestOutageSeconds: 600 }
    t.match(await report(a), want, 'A before the roll-up')
    t.match(await report(b), want, 'B before the roll-up')

    const ran = await Promise.all([a, b].map((c) => servicesOf(c.running.app).availabilityRollup.runScheduled()))
    t.equal(ran.filter(Boolean).length, 1, 'exactly one instance ran the roll-up')
    const hours = await servicesOf(b.running.app).db.kysely.selectFrom('availability_hours').selectAll().where('screen_id', '=', d.screenId).execute()
    t.equal(hours.length, 1, 'the two short stretches share one hourly row')
    t.same(JSON.parse(hours[0]!.online), [
      [Date.parse('2026-06-01T12:00:00.000Z'), Date.parse('2026-06-01T12:10:00.000Z')],
      [Date.parse('2026-06-01T12:20:00.000Z'), Date.parse('2026-06-01T12:30:00.000Z')],
    ])
    t.match(await report(a), want, 'A after the roll-up')
    t.match(await report(b), want, 'B after the roll-up')

    // A subscription made on A falls due: both instances run the due ones at once, one mail goes.
    const sub = await a.call('POST', '/v1/report-subscriptions', { report: 'availability', cadence: 'weekly', recipients: ['ops@example.com'] })
    t.equal(sub.status, 201, JSON.stringify(sub.body))
    clock.set(sub.body.data.nextRunAt)
    const sent = await Promise.all([a, b].map((c) => servicesOf(c.running.app).reportSubscriptions.runDue()))
    t.equal(sent[0]! + sent[1]!, 1, 'the period is mailed once between them')
    t.equal((await servicesOf(a.running.app).mailer.outbox(a.workspaceId)).length, 1)
  }),
)
