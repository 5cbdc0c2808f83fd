// Presence shared between the instances of one cloud through Redis (RedisPresenceStore,
// ClusterPresence): a screen connected to B is online through A's API; a move between
// instances announces nothing; a screen whose instance dies without a clean stop goes
// offline one grace after that instance's last heartbeat, announced once. Real Redis
// (SVC_TEST_REDIS_URL), real brokers and real MQTT devices, a ManualClock for the times.
import { servicesOf } from '../../src/app.js'
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { redis, toolTest } from '@svc/shared/testing'
import { connectDevice, startCloud, type Cloud } from '../devicelink/link.js'
import { freshSqlite } from '../db/sqliteTemplate.js'
import { testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'
import { RedisPresenceStore } from '../../src/domains/devicelink/RedisPresenceStore.js'

const GRACE = 5000
const BEAT = 1000

async function twoClouds(t: Test): Promise<{ a: Cloud; b: Cloud; clock: ManualClock; events: string[] }> {
  const config = {
    redisUrl: process.env.SVC_TEST_REDIS_URL ?? null,
    redisPrefix: `svc-test-${randomUUID()}:`,
    screenOfflineGraceMs: GRACE,
    presenceHeartbeatMs: BEAT,
    presenceTimers: false,
  }
  const db = await freshSqlite(testConfig(config).dbBusyTimeoutMs)
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const content = new InMemoryContentResolver()
  const a = await startCloud(t, { clock, content, config, deps: { db } })
  const b = await startCloud(t, { clock, content, config, deps: { db }, workspace: { id: a.workspaceId, apiKey: a.apiKey } })
  t.teardown(() => db.close())
  const events: string[] = []
  for (const [name, c] of [
    ['A', a],
    ['B', b],
  ] as const)
    servicesOf(c.running.app).events.subscribe((e) => void (e.event.startsWith('screen.') && events.push(`${name}:${e.event}`)))
  return { a, b, clock, events }
}

const mqttUrl = (c: Cloud) => `mqtt://127.0.0.1:${c.running.mqttPort}`
const status = async (c: Cloud, id: string) => (await c.call('GET', `/v1/screens/${id}`)).body.data.status as string
async function settle(...clouds: Cloud[]): Promise<void> {
  for (const c of clouds) await servicesOf(c.running.app).presence.idle()
}

toolTest(t, redis, "a screen connected to B is online through A's API and in A's view of the store; a move to A announces nothing", async (t) => {
  const { a, b, events } = await twoClouds(t)
  t.ok(servicesOf(a.running.app).clusterPresence, 'instances joined through Redis share presence')
  const d = await a.pair('Lobby')
  const onB = await connectDevice(t, mqttUrl(b), d)
  await onB.next(() => true)
  await settle(a, b)
  t.equal(await status(a, d.screenId), 'online')
  const storeOfA = (servicesOf(a.running.app).presence as unknown as { store: RedisPresenceStore }).store
  t.ok(storeOfA instanceof RedisPresenceStore)
  t.ok(await storeOfA.isLive(d.screenId), 'A sees the connection B holds')
  await onB.client.endAsync()
  const onA = await connectDevice(t, mqttUrl(a), d)
  await onA.next(() => true)
  await settle(a, b)
  await servicesOf(a.running.app).clusterPresence!.runOnce()
  t.equal(await status(b, d.screenId), 'online')
  t.same(events, ['B:screen.online'], 'one online, no offline for the move')
})

toolTest(t, redis, 'a screen whose instance dies goes offline one grace after its last heartbeat, announced once', async (t) => {
  const { a, b, clock, events } = await twoClouds(t)
  let offlineSince = ''
  servicesOf(a.running.app).events.subscribe((e) => {
    if (e.event === 'screen.offline') offlineSince = (e.data as { since: string }).since
  })
  const d = await a.pair('Hall')
  const dev = await connectDevice(t, mqttUrl(b), d)
  await dev.next(() => true)
  await settle(a, b)
  await servicesOf(b.running.app).clusterPresence!.runOnce() // B's last heartbeat, at 12:00:00
  // B's process is gone: nothing it would do any more reaches Redis (no clean stop).
  const storeOfB = (servicesOf(b.running.app).presence as unknown as { store: Record<string, unknown> }).store
  for (const m of ['open', 'close', 'markAway', 'clearAway', 'forgetInstance', 'beat', 'reapDead'])
    storeOfB[m] = async () => {
      throw new Error('process gone')
    }
  await b.running.close()
  t.equal(await status(a, d.screenId), 'online', 'nothing has told A yet')

  clock.advance(BEAT)
  await servicesOf(a.running.app).clusterPresence!.runOnce()
  await settle(a)
  t.equal(await status(a, d.screenId), 'online', 'B missed one beat: not dead yet')

  clock.advance(BEAT * 2 + 1) // B silent for over 3 beats: reaped, its screen's grace started at its last beat
  await servicesOf(a.running.app).clusterPresence!.runOnce()
  await settle(a)
  t.equal(await status(a, d.screenId), 'online', 'inside the grace')
  t.same(events, ['B:screen.online'])

  clock.advance(GRACE - 3 * BEAT) // one grace after B's last beat
  await servicesOf(a.running.app).clusterPresence!.runOnce()
  await settle(a)
  t.equal(await status(a, d.screenId), 'offline')
  const offline = await new Promise<string>((resolve) => setImmediate(() => resolve(offlineSince)))
  t.equal(offline, '2026-06-01T12:00:00.000Z', 'offline since the dead instance last beat')
  clock.advance(GRACE)
  await servicesOf(a.running.app).clusterPresence!.runOnce()
  await servicesOf(a.running.app).presence.sweep()
  await settle(a)
  t.same(events, ['B:screen.online', 'A:screen.offline'], 'announced once')
})
