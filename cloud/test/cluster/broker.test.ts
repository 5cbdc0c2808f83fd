// Two instances of one cloud (one database, one Redis, each its own broker and ports):
// a publish on one reaches a device on the other, the latest desired state is rebuilt from
// the database wherever the device subscribes, a second connection with the same client id
// on the other instance takes over, and a device's messages are handled by its own
// instance only. Needs a Redis (SVC_TEST_REDIS_URL).
import { servicesOf } from '../../src/app.js'
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { HANG_GUARD_MS, redis, toolTest } from '@svc/shared/testing'
import { topics } from '@svc/shared/mqtt/index'
import { connectDevice, startCloud, type Cloud } from '../devicelink/link.js'
import { freshSqlite } from '../db/sqliteTemplate.js'
import { testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'

async function twoClouds(t: Test): Promise<{ a: Cloud; b: Cloud }> {
  const config = { redisUrl: process.env.SVC_TEST_REDIS_URL ?? null, redisPrefix: `svc-test-${randomUUID()}:` }
  const db = await freshSqlite(testConfig(config).dbBusyTimeoutMs)
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const content = new InMemoryContentResolver()
  const a = await startCloud(t, { clock, content, config, deps: { db } })
  const b = await startCloud(t, { clock, content, config, deps: { db }, workspace: { id: a.workspaceId, apiKey: a.apiKey } })
  // Registered after the clouds' own teardown, so it runs after them.
  t.teardown(() => db.close())
  content.add(a.workspaceId, { kind: 'media', id: 'med_promo' }, { content: { name: 'Promo', url: 'https://cdn.example/promo.mp4', mimeType: 'video/mp4' } })
  return { a, b }
}

/** `p`, or a failure naming `what` after HANG_GUARD_MS (a hang guard). */
function guarded<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${HANG_GUARD_MS / 60_000} minutes for ${what}`)), HANG_GUARD_MS)
  })
  return Promise.race([p, expiry]).finally(() => clearTimeout(timer))
}

const mqttUrl = (c: Cloud) => `mqtt://127.0.0.1:${c.running.mqttPort}`

toolTest(t, redis, 'a cast made on A reaches a device connected to B; its desired state is rebuilt from the database on B', async (t) => {
  const { a, b } = await twoClouds(t)
  const d = await a.pair('Lobby')
  const dev = await connectDevice(t, mqttUrl(b), d)
  const first = await dev.next(() => true)
  t.same(first.casts, [], 'B published the state it built from the database when the device subscribed')
  const cast = (await a.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_promo' })).body.data
  const withCast = await dev.next((s) => s.casts[0]?.id === cast.id)
  t.ok(withCast.version > first.version)
  const cleared = await b.call('POST', `/v1/casts/${cast.id}/clear`)
  t.equal(cleared.status, 200)
  const after = await dev.next((s) => s.version > withCast.version)
  t.same(after.casts, [], 'clearing on B reaches it too')
  t.notOk(servicesOf(b.running.app).broker.hasRetained(topics.desired(d.screenId)), 'no instance keeps a retained copy that could go stale')
})

toolTest(t, redis, 'the device moves to A: it gets exactly its latest state there, rebuilt from the database', async (t) => {
  const { a, b } = await twoClouds(t)
  const d = await a.pair('Hall')
  const onB = await connectDevice(t, mqttUrl(b), d)
  await onB.next(() => true)
  const cast = (await a.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_promo' })).body.data
  const held = await onB.next((s) => s.casts[0]?.id === cast.id)
  await onB.client.endAsync()
  const onA = await connectDevice(t, mqttUrl(a), d)
  const got = await onA.next(() => true)
  t.equal(got.casts[0]?.id, cast.id, 'the first state on A carries the cast')
  t.ok(got.version > held.version, 'with a newer version, never an older one')
  // A later state on the same path (the cloud's publishes go through the one Redis bus, in
  // order): whatever else the move sent the device is in by the time that state arrives.
  t.equal((await a.call('POST', `/v1/casts/${cast.id}/clear`)).status, 200)
  const cleared = await onA.next((s) => s.version > got.version && s.casts.length === 0)
  t.same(
    onA.states.map((s) => s.version),
    [got.version, cleared.version],
    'exactly one state before the clear, no stale retained copy before it',
  )
})

toolTest(t, redis, 'one session per screen: a connection on B takes over, the older one on A is closed; presence stays online', async (t) => {
  const { a, b } = await twoClouds(t)
  const d = await a.pair('Door')
  const seen: string[] = []
  for (const c of [a, b]) servicesOf(c.running.app).events.subscribe((e) => void (e.event.startsWith('screen.') && seen.push(e.event)))
  const first = await connectDevice(t, mqttUrl(a), d)
  await first.next(() => true)
  const closed = new Promise<void>((resolve) => first.client.once('close', () => resolve()))
  const second = await connectDevice(t, mqttUrl(b), d)
  await second.next(() => true)
  await closed
  t.pass('the connection on A was closed by the one on B')
  await servicesOf(a.running.app).presence.idle()
  await servicesOf(b.running.app).presence.idle()
  t.notOk(servicesOf(a.running.app).broker.isConnected(d.screenId), 'A holds no connection of the screen')
  t.ok(servicesOf(b.running.app).broker.isConnected(d.screenId), 'B holds it')
  t.equal((await a.call('GET', `/v1/screens/${d.screenId}`)).body.data.status, 'online')
  // A cast still reaches the one live connection.
  const cast = (await a.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_promo' })).body.data
  await second.next((s) => s.casts[0]?.id === cast.id)
  t.same(seen, ['screen.online'], 'one online, no offline for the take-over')
})

toolTest(t, redis, "a device's reported state is handled by its own instance only", async (t) => {
  const { a, b } = await twoClouds(t)
  const d = await a.pair('Stage')
  const counts = { a: 0, b: 0 }
  servicesOf(a.running.app).presence.onReported(() => void counts.a++)
  servicesOf(b.running.app).presence.onReported(() => void counts.b++)
  const dev = await connectDevice(t, mqttUrl(b), d)
  const s = await dev.next(() => true)
  await dev.client.publishAsync(
    topics.reported(d.screenId),
    JSON.stringify({
      version: s.version,
      playing: { source: 'cast', contentKind: 'media', contentId: 'med_1', castId: 'cast_1' },
      storage: { usedBytes: 5, totalBytes: 10 },
      at: '2026-06-01T12:00:00.000Z',
    }),
    { qos: 1 },
  )
  for (const guardEnd = Date.now() + HANG_GUARD_MS; counts.a + counts.b === 0 && Date.now() < guardEnd; ) {
    await new Promise((r) => setTimeout(r, 50))
    await servicesOf(b.running.app).presence.flushReported()
  }
  // A's copy of the device's message came over the Redis bus before anything published on it
  // later: a message A publishes after B handled the report reaches A after that copy did.
  const marker = `$svc/test/${randomUUID()}`
  let markerBack!: () => void
  const back = new Promise<void>((resolve) => (markerBack = resolve))
  await servicesOf(a.running.app).broker.subscribe(marker, () => markerBack())
  await servicesOf(a.running.app).broker.publish(marker, Buffer.from('after the report'), false)
  await guarded(back, "A's own message back over the Redis bus")
  await servicesOf(a.running.app).presence.flushReported()
  t.same(counts, { a: 0, b: 1 })
})

toolTest(t, redis, 'a serial job queued on A goes out to the device connected to B, once, and is marked sent', async (t) => {
  const { a, b } = await twoClouds(t)
  const d = await a.pair('Panel')
  const dev = await connectDevice(t, mqttUrl(b), d)
  await dev.next(() => true)
  const jobs: { id: string }[] = []
  dev.client.on('message', (topic, payload) => {
    if (topic === topics.jobs(d.screenId)) jobs.push(JSON.parse(payload.toString()))
  })
  const queued = await a.call('POST', `/v1/screens/${d.screenId}/serial`, { value: 'AA 11 01 01 01 14', encoding: 'hex' })
  t.equal(queued.status, 202)
  const id = queued.body.data.id as string
  for (const guardEnd = Date.now() + HANG_GUARD_MS; !jobs.length && Date.now() < guardEnd; ) await new Promise((r) => setTimeout(r, 50))
  t.same(
    jobs.map((j) => j.id),
    [id],
    'B, which holds the connection, published it',
  )
  let status = ''
  for (const guardEnd = Date.now() + HANG_GUARD_MS; status !== 'sent' && Date.now() < guardEnd; ) {
    status = (await a.call('GET', `/v1/serial-jobs/${id}`)).body.data.status
    if (status !== 'sent') await new Promise((r) => setTimeout(r, 50))
  }
  t.equal(status, 'sent', "the device's PUBACK on B marks it sent")
  // A second job on the same path: a repeat of the first would have gone out before it.
  const second = await a.call('POST', `/v1/screens/${d.screenId}/serial`, { value: 'AA 11 01 01 00 13', encoding: 'hex' })
  t.equal(second.status, 202)
  for (const guardEnd = Date.now() + HANG_GUARD_MS; jobs.length < 2 && Date.now() < guardEnd; ) await new Promise((r) => setTimeout(r, 50))
  t.same(
    jobs.map((j) => j.id),
    [id, second.body.data.id],
    'not twice: the next job is the next message',
  )
})
