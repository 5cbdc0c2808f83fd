// One device cannot slow every tenant. A burst of `reported` inside the message budget is
// coalesced (the latest is stored, in a few writes); a device flooding valid QoS 0 `reported`
// messages while another workspace's screen connects does not delay that screen going
// online, sees its reading paused and is disconnected, and the database sees a bounded
// number of reported writes (counted through a wrapper around the database). The budget
// drops what a device sends beyond it and disconnects a device that stays over it.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import mqtt from 'mqtt'
import { topics } from '@svc/shared/mqtt/index'
import { connectDevice, startCloud } from './link.js'
import { DeviceBudget } from '../../src/platform/broker/DeviceBudget.js'
import { ManualClock } from '../../src/platform/clock.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const reported = (k: number) =>
  JSON.stringify({
    version: 1,
    playing: { source: 'assignment', contentKind: 'playlist', contentId: 'pl_1' },
    storage: { usedBytes: k, totalBytes: 1_000_000_000 },
    at: '2026-06-01T12:00:00.000Z',
  })

t.test('a burst of reported state within the budget is coalesced: the latest is stored, in a few writes', async (t) => {
  const c = await startCloud(t)
  const { presence, db } = servicesOf(c.running.app)
  let reportedWrites = 0
  const run = db.run.bind(db)
  db.run = (sql, params) => {
    if (/^UPDATE screens SET reported\b/.test(sql)) reportedWrites++
    return run(sql, params)
  }
  const d = await c.pair('Chatty')
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, d)
  // Inside the burst (200 messages) of the message budget.
  const N = 150
  const started = performance.now()
  for (let k = 0; k < N; k++) dev.client.publish(topics.reported(d.screenId), reported(k), { qos: 0 })
  await dev.client.publishAsync(topics.reported(d.screenId), reported(N), { qos: 0 })
  let stored: { storage?: { usedBytes: number } } | null = null
  for (const until = performance.now() + HANG_GUARD_MS; performance.now() < until; await new Promise((r) => setTimeout(r, 20))) {
    await presence.idle()
    stored = (await c.call('GET', `/v1/screens/${d.screenId}`)).body.data.reported
    if (stored?.storage?.usedBytes === N) break
  }
  const elapsed = performance.now() - started
  t.equal(stored?.storage?.usedBytes, N, 'the stored reported state is the latest message')
  // At most one write per screen per 250 ms, plus the first one at once.
  const bound = Math.ceil(elapsed / 250) + 2
  t.ok(reportedWrites <= bound, `${reportedWrites} reported writes for ${N + 1} messages in ${Math.round(elapsed)} ms (bound ${bound})`)
  t.ok(dev.client.connected, 'a burst inside the budget is no abuse: the device stays connected')
})

t.test('a device flooding reported state does not delay another screen going online, and is disconnected', async (t) => {
  const c = await startCloud(t)
  const { db, workspaces, apiKeys, broker } = servicesOf(c.running.app)
  let reportedWrites = 0
  const run = db.run.bind(db)
  db.run = (sql, params) => {
    if (/^UPDATE screens SET reported\b/.test(sql)) reportedWrites++
    return run(sql, params)
  }
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const flooder = await c.pair('Flooder')
  // The other screen lives in another workspace.
  const ws2 = await workspaces.create('Other tenant', 'us')
  const key2 = (await apiKeys.createRoot(ws2.id, ws2.region, 'Owner', 'all')).secret
  const reg = (await c.call('POST', '/v1/devices/register', {}, null)).body.data
  const paired = await c.call('POST', '/v1/screens/pair', { code: reg.pairingCode, name: 'Quiet' }, key2)
  t.equal(paired.status, 201)
  const quiet = (await c.call('GET', `/v1/devices/register/${reg.registrationId}`, undefined, reg.pollSecret)).body.data
  const quietStatus = async () => (await c.call('GET', `/v1/screens/${quiet.screenId}`, undefined, key2)).body.data.status as string

  const dev = await connectDevice(t, url, flooder)
  const closed = new Promise<void>((resolve) => dev.client.stream.once('close', () => resolve()))
  const N = 50_000
  const started = performance.now()
  // Fire the whole flood without waiting, then connect the other screen in the middle of it.
  for (let k = 0; k < N; k++) dev.client.publish(topics.reported(flooder.screenId), reported(k), { qos: 0 })
  const quietDev = await mqtt.connectAsync(url, {
    clientId: quiet.screenId,
    username: quiet.screenId,
    password: quiet.deviceSecret,
    protocolVersion: 4,
    clean: false,
    reconnectPeriod: 0,
  })
  t.after(() => quietDev.endAsync(true))
  // Polled with a hang guard (HANG_GUARD_MS).
  let online = false
  for (const until = performance.now() + HANG_GUARD_MS; !online && performance.now() < until; await new Promise((r) => setTimeout(r, 20)))
    online = (await quietStatus()) === 'online'
  t.ok(online, 'the other screen, connected in the middle of the flood, is online')
  // Over budget the broker reads the flooder no more until its budget refills; still flooding 2 s on, it is cut.
  await closed
  // The writes' bound grows with the time the flood took (at most one per screen per 250 ms).
  const elapsed = performance.now() - started
  t.pass('the flooder is disconnected')
  t.equal(broker.budget.stats.disconnects, 1, 'counted')
  t.ok(broker.budget.stats.pauses >= 1, 'its reading was paused first')
  const bound = Math.ceil(elapsed / 250) + 2
  t.ok(reportedWrites <= bound, `${reportedWrites} reported writes for ${N} messages sent in ${Math.round(elapsed)} ms (bound ${bound})`)
  t.comment(`flood: ${N} messages sent, ${broker.budget.stats.over} read over budget, ${reportedWrites} database writes`)
})

t.test('the budget drops what a device sends beyond it, with a warning, and disconnects it when sustained', async (t) => {
  const clock = new ManualClock(0)
  const warnings: string[] = []
  const b = new DeviceBudget({ ratePerSecond: 10, burst: 5, sustainMs: 2000, warnEveryMs: 1000 }, clock)
  b.log = { warn: (_o, msg) => void warnings.push(msg) }
  t.same(
    Array.from({ length: 5 }, () => b.take('a')),
    ['ok', 'ok', 'ok', 'ok', 'ok'],
    'the burst passes',
  )
  t.equal(b.take('a'), 'over', 'the sixth at once is over budget')
  t.equal(b.take('b'), 'ok', 'another device has its own bucket')
  t.equal(warnings.length, 1, 'one warning')
  clock.nowMs += 100
  t.equal(b.take('a'), 'ok', 'one token back after 100 ms at 10/s')
  for (let k = 0; k < 50; k++) b.take('a')
  t.equal(warnings.length, 1, 'warnings are rate-limited')
  // It keeps flooding: each 100 ms earns one message, the rest is dropped; after 2 s, out.
  let verdict = 'ok'
  while (clock.nowMs < 5000 && verdict !== 'sustained') {
    clock.nowMs += 10
    verdict = b.take('a')
  }
  t.equal(verdict, 'sustained')
  t.ok(clock.nowMs >= 2000 && clock.nowMs < 2300, `disconnected after ${clock.nowMs} ms over budget`)
  t.ok(warnings.length >= 2)
  // A device that slows down recovers: over budget briefly, then under it long enough.
  clock.nowMs = 100_000
  for (let k = 0; k < 6; k++) b.take('c')
  clock.nowMs += 1000
  const verdicts = Array.from({ length: 40 }, () => ((clock.nowMs += 200), b.take('c')))
  t.ok(
    verdicts.every((v) => v === 'ok'),
    'a device under its rate is never dropped',
  )
})

t.test('over budget on a real connection: status messages dropped, a sustained flood disconnected', async (t) => {
  const c = await startCloud(t)
  const { broker } = servicesOf(c.running.app)
  broker.budget.options = { ratePerSecond: 5, burst: 5, sustainMs: 400, warnEveryMs: 1000 }
  const d = await c.pair()
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, d)
  const seen: string[] = []
  await broker.subscribe(topics.status(d.screenId), (m) => void seen.push(m.payload.toString()))
  const closed = new Promise<void>((resolve) => dev.client.stream.once('close', () => resolve()))
  const msg = (k: number) => JSON.stringify({ status: 'online', at: new Date(Date.UTC(2026, 5, 1, 12, 0, k)).toISOString() })
  for (let k = 0; k < 20; k++) dev.client.publish(topics.status(d.screenId), msg(k), { qos: 0 })
  // The broker handles a connection's packets one after the other: once a SUBSCRIBE sent after
  // the 20 is acknowledged, all 20 have been judged (and the ones let through delivered).
  await dev.client.subscribeAsync(topics.desired(d.screenId), { qos: 1 })
  t.ok(seen.length >= 5 && seen.length < 20, `${seen.length} of 20 at once got through (burst 5)`)
  t.ok(dev.client.connected, 'a burst over budget is dropped, not disconnected')
  let k = 20
  const flood = setInterval(() => dev.client.connected && dev.client.publish(topics.status(d.screenId), msg(k++ % 60), { qos: 0 }), 5)
  const guard = new Promise<'guard'>((r) => setTimeout(r, HANG_GUARD_MS, 'guard').unref())
  t.not(await Promise.race([closed, guard]), 'guard', 'the connection was closed (waited for as long as the hang guard)')
  clearInterval(flood)
  t.notOk(dev.client.connected, 'sustained over budget: disconnected')
})
