// What one screen may claim in its play log, through a real MQTT client as the device: plays
// ending in the future or starting before the screen was paired are refused, and so is a
// play that would make more plays at once than the workspace's largest layout has zones;
// refused records are acknowledged and dropped (the rest of the batch is stored); a flood of
// 30,000 plays is held to the screen's burst and rate (its batches wait for their PUBACK)
// while an agent draining a backlog one batch at a time loses nothing; the workspace's daily
// quota; the `play-log-limited` alert opens and closes.
import { servicesOf } from '../../src/app.js'
import t, { type Test } from 'tap'
import { topics } from '@svc/shared/mqtt/index'
import { loadConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import { connectDevice, startCloud, type Cloud, type Device } from '../devicelink/link.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const PAIRED = '2026-06-01T09:00:00.000Z'
const NOW = '2026-06-01T12:00:00.000Z'
const at = (iso: string, plusMs = 0) => new Date(Date.parse(iso) + plusMs).toISOString()

function play(screenId: string, startedAt: string, ms: number, extra: Record<string, unknown> = {}) {
  return {
    screenId,
    source: 'assignment',
    contentKind: 'playlist',
    contentId: 'pl_1',
    castId: null,
    emergencyId: null,
    itemKind: 'media',
    itemId: 'med_1',
    zone: null,
    startedAt,
    endedAt: at(startedAt, ms),
    durationMs: ms,
    ...extra,
  }
}

/** A cloud on a ManualClock (its timers too: a batch waiting for its screen's rate waits on it), one screen paired at 09:00, the clock then at 12:00. */
async function setUp(t: Test, config = {}): Promise<{ cloud: Cloud; screen: Device }> {
  const clock = new ManualClock(PAIRED)
  const cloud = await startCloud(t, { clock, deps: { timers: clock }, config })
  const screen = await cloud.pair('Lobby')
  clock.set(NOW)
  return { cloud, screen }
}

/** Moves the cloud's clock on by `ms`, a step at a time, each step once a batch waits for its screen's rate (or after 0.4 s without one). */
async function runClock(cloud: Cloud, ms: number, step = 1000): Promise<void> {
  for (let left = ms; left > 0; left -= step) {
    for (const guardEnd = Date.now() + HANG_GUARD_MS; cloud.clock.pending === 0 && Date.now() < guardEnd; ) await new Promise((r) => setTimeout(r, 2))
    await cloud.clock.advanceSettling(Math.min(step, left))
  }
}

const count = async (cloud: Cloud, screenId: string) =>
  Number((await servicesOf(cloud.running.app).db.all<{ n: number }>('SELECT count(*) AS n FROM play_log WHERE screen_id = ?', [screenId]))[0]!.n)

async function alertEvents(cloud: Cloud): Promise<any[]> {
  const r = await cloud.call('GET', '/v1/alert-events?code=play-log-limited')
  if (r.status !== 200) throw new Error(`alert events: ${r.status}`)
  return r.body.data
}

t.test('the settings: defaults a fleet never reaches, bad values stop the start', async (t) => {
  const c = loadConfig({})
  t.same([c.playLogScreenRate, c.playLogScreenBurst, c.playLogDailyPerZone], [20, 2000, 86_400])
  t.throws(() => loadConfig({ SVC_PLAY_LOG_SCREEN_RATE: '5' }), /SVC_PLAY_LOG_SCREEN_RATE must be an integer >= 10/)
  t.throws(() => loadConfig({ SVC_PLAY_LOG_SCREEN_BURST: '100' }), /SVC_PLAY_LOG_SCREEN_BURST must be an integer >= 200/)
  t.throws(() => loadConfig({ SVC_PLAY_LOG_DAILY_PER_ZONE: 'lots' }), /SVC_PLAY_LOG_DAILY_PER_ZONE must be an integer >= 1/)
})

t.test('plays in the future, before pairing or beyond the zones are refused, acknowledged, counted, alerted', async (t) => {
  const { cloud, screen } = await setUp(t)
  const id = screen.screenId
  const rule = await cloud.call('POST', '/v1/alert-rules', { name: 'Play log', config: { codes: ['play-log-limited'] } })
  t.equal(rule.status, 201)
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${cloud.running.mqttPort}`, screen, {}, false)
  const send = (records: unknown[]) => dev.client.publishAsync(topics.playLog(id), JSON.stringify({ batchId: 'b', records }), { qos: 1 })

  await send([
    play(id, '2026-06-01T10:00:00.000Z', 10_000), // fine
    play(id, at(NOW, 10 * 60_000), 10_000), // starts 10 minutes from now
    play(id, at(NOW, -60_000), 7 * 60_000), // ends 6 minutes from now
    play(id, at(NOW, 3 * 60_000), 60_000), // ends 4 minutes from now: inside the 5 minutes allowed
    play(id, '2026-06-01T08:00:00.000Z', 10_000), // an hour before pairing
    play(id, at(PAIRED, -4 * 60_000), 10_000), // 4 minutes before pairing: inside the 5 minutes allowed
  ])
  // The PUBACK came (publishAsync resolved): acknowledged, and the acceptable records stored.
  t.equal(await count(cloud, id), 3, 'the 3 plausible plays stored, the 3 others dropped')
  t.same(servicesOf(cloud.running.app).playLog.stats.refused, { future: 2, beforePairing: 1, overlap: 0, quota: 0 })
  t.ok(dev.client.connected, 'the device stays connected')

  // One zone (no layout in the workspace): one play at a time. Plays that touch are fine.
  await send([
    play(id, '2026-06-01T10:01:00.000Z', 10_000),
    play(id, '2026-06-01T10:01:10.000Z', 10_000), // starts as the one before ends
    play(id, '2026-06-01T10:01:15.000Z', 10_000), // overlaps the one before
    play(id, '2026-06-01T10:00:05.000Z', 1000), // overlaps a play stored by the first batch
    play(id, '2026-06-01T10:02:00.000Z', 0), // no length: holds its instant
    play(id, '2026-06-01T10:02:00.000Z', 0, { itemId: 'med_2' }), // the same instant: two at once
  ])
  t.equal(await count(cloud, id), 6, '3 more stored')
  t.equal(servicesOf(cloud.running.app).playLog.stats.refused.overlap, 3, '3 refused for overlapping')

  // A batch sent again (a lost PUBACK) is not an overlap with itself.
  await send([play(id, '2026-06-01T10:01:00.000Z', 10_000), play(id, '2026-06-01T10:01:10.000Z', 10_000)])
  t.equal(servicesOf(cloud.running.app).playLog.stats.refused.overlap, 3, 'a re-sent batch is no overlap')

  const [ev] = await alertEvents(cloud)
  t.ok(ev, 'play-log-limited opened')
  t.equal(ev.screenId, id)
  t.equal(ev.closedAt, null)
  t.match(ev.message, /Lobby: plays refused \(2 ending in the future, 1 from before it was paired\)/)
  t.match(ev.detail, { kind: 'play-log-limited', refused: { future: 2, beforePairing: 1 }, zones: 1 })
  t.equal((await alertEvents(cloud)).length, 1, 'one event while it lasts')

  // A layout with 3 zones in the workspace: 3 plays at once are what such a screen shows; a 4th is refused.
  const layout = await cloud.call('POST', '/v1/layouts', {
    name: 'Three',
    zones: ['a', 'b', 'c'].map((z, i) => ({ id: z, x: i * 600, y: 0, width: 600, height: 1080 })),
  })
  t.equal(layout.status, 201)
  cloud.clock.advance(61_000) // the workspace's zones are read again after a minute
  const zoned = (zone: string, startedAt: string) => play(id, startedAt, 5000, { contentKind: 'layout', contentId: layout.body.data.id, zone })
  await send([
    zoned('a', '2026-06-01T11:00:00.000Z'),
    zoned('b', '2026-06-01T11:00:01.000Z'),
    zoned('c', '2026-06-01T11:00:02.000Z'),
    zoned('a', '2026-06-01T11:00:05.000Z'),
    zoned('d', '2026-06-01T11:00:03.000Z'), // a 4th at once
  ])
  t.equal(await count(cloud, id), 10, 'three zones at once and the next play of a zone stored')
  t.equal(servicesOf(cloud.running.app).playLog.stats.refused.overlap, 4, 'the 4th at once refused')

  // Quiet for 15 minutes, then a clean batch: the alert closes.
  cloud.clock.advance(15 * 60_000)
  await send([zoned('a', '2026-06-01T11:10:00.000Z')])
  // The alert is closed before the PUBACK.
  const [closed] = await alertEvents(cloud)
  t.match(closed, { closedAt: at(NOW, 16 * 60_000 + 1000), detail: { kind: 'recovery' } }, 'closed after a quiet spell')
})

t.test('a flood of 30,000 plays claiming the same minute: one stored, the rest refused, acknowledged, alerted', async (t) => {
  const { cloud, screen } = await setUp(t)
  const id = screen.screenId
  await cloud.call('POST', '/v1/alert-rules', { name: 'Play log', config: { codes: ['play-log-limited'] } })
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${cloud.running.mqttPort}`, screen, {}, false)
  const sent = Array.from({ length: 150 }, (_, b) =>
    dev.client.publishAsync(
      topics.playLog(id),
      JSON.stringify({
        batchId: `f${b}`,
        records: Array.from({ length: 200 }, (_, i) => play(id, '2026-06-01T11:00:00.000Z', 60_000, { itemId: `med_${b}_${i}` })),
      }),
      { qos: 1 },
    ),
  )
  await Promise.all(sent)
  t.equal(await count(cloud, id), 1, 'one screen shows one thing at a time: one stored')
  t.equal(servicesOf(cloud.running.app).playLog.stats.refused.overlap, 29_999, 'every other one refused')
  t.ok(dev.client.connected, 'every batch acknowledged, the device connected')
  t.match((await alertEvents(cloud))[0], { detail: { refused: { overlap: 199 } } }, 'alerted (with the counts of the first batch refused)')
})

t.test('a flood of 30,000 plausible plays is held to the burst and the rate', async (t) => {
  const { cloud, screen } = await setUp(t)
  const id = screen.screenId
  const svc = servicesOf(cloud.running.app).playLog
  // Reported once slowed through more than 1,000 plays (an agent's play log holds 50,000).
  svc.slowedAlertPlays = 1000
  await cloud.call('POST', '/v1/alert-rules', { name: 'Play log', config: { codes: ['play-log-limited'] } })
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${cloud.running.mqttPort}`, screen, {}, false)
  // 30,000 plausible plays (one after the other since pairing, 300 ms each), 150 batches sent without waiting for PUBACKs.
  const start = Date.parse(PAIRED)
  const batches = Array.from({ length: 150 }, (_, b) =>
    JSON.stringify({ batchId: `f${b}`, records: Array.from({ length: 200 }, (_, i) => play(id, new Date(start + (b * 200 + i) * 300).toISOString(), 300)) }),
  )
  const acked: number[] = []
  batches.forEach((p, b) => dev.client.publish(topics.playLog(id), p, { qos: 1 }, () => acked.push(b)))
  // The burst (2,000 plays) is stored at once; the next batch waits for the rate (10 s on the cloud's clock).
  for (const guardEnd = Date.now() + HANG_GUARD_MS; svc.stats.waits === 0 && Date.now() < guardEnd; ) await new Promise((r) => setTimeout(r, 10))
  t.equal(svc.stats.waits, 1, 'a batch is waiting for the rate')
  t.equal(await count(cloud, id), 2000, 'the burst stored, nothing more')
  t.equal(acked.length, 10, 'the batches stored are acknowledged, the rest wait')
  t.same(await alertEvents(cloud), [], 'not yet reported: a backlog may be this large')
  // A minute on the cloud's clock later: 20 plays a second more.
  await runClock(cloud, 60_000)
  const stored = await count(cloud, id)
  // (A batch is written 60 rows at a time: the count may catch one half written.)
  t.ok(stored <= 2000 + 20 * 60, `${stored} stored after a minute: the burst and 20 a second`)
  t.ok(stored >= 2000 + 20 * 50, 'the rate is served')
  t.ok(dev.client.connected, 'slowed, not cut')
  const [ev] = await alertEvents(cloud)
  t.match(ev, { code: 'play-log-limited', screenId: id, detail: { rate: true, ratePerSecond: 20 } }, 'reported once slowed through more than an agent holds')
  t.match(ev.message, /plays sent faster than 20 a second were slowed/)
})

t.test("an agent's backlog, one batch in flight, drains at the rate, all stored, no alert", async (t) => {
  const { cloud, screen } = await setUp(t)
  const id = screen.screenId
  await cloud.call('POST', '/v1/alert-rules', { name: 'Play log', config: { codes: ['play-log-limited'] } })
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${cloud.running.mqttPort}`, screen, {}, false)
  // 5,000 plays of 2 s (the 3 hours since pairing), sent as the agent sends: the next batch after the PUBACK.
  const start = Date.parse(PAIRED) + 60_000
  for (let b = 0; b < 25; b++) {
    const records = Array.from({ length: 200 }, (_, i) => play(id, new Date(start + (b * 200 + i) * 2000).toISOString(), 2000))
    let done = false
    const sent = dev.client.publishAsync(topics.playLog(id), JSON.stringify({ batchId: `b${b}`, records }), { qos: 1 }).then(() => (done = true))
    // Time runs on while the batch waits for its PUBACK (for the screen's rate).
    while (!done) await (cloud.clock.pending ? cloud.clock.advanceSettling(1000) : new Promise((r) => setTimeout(r, 2)))
    await sent
  }
  t.equal(await count(cloud, id), 5000, 'every play stored')
  t.same(servicesOf(cloud.running.app).playLog.stats.refused, { future: 0, beforePairing: 0, overlap: 0, quota: 0 })
  t.ok(servicesOf(cloud.running.app).playLog.stats.waits > 0, 'past the burst, batches waited for the rate')
  t.same(await alertEvents(cloud), [], 'no alert: one batch at a time is how an agent drains a backlog')
})

t.test("the workspace's daily quota: plays over it are dropped and alerted; the next day they are stored again", async (t) => {
  // 5 plays a day per zone: one screen, no layout, so 5 plays a day.
  const { cloud, screen } = await setUp(t, { playLogDailyPerZone: 5 })
  const id = screen.screenId
  await cloud.call('POST', '/v1/alert-rules', { name: 'Play log', config: { codes: ['play-log-limited'] } })
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${cloud.running.mqttPort}`, screen, {}, false)
  const plays = (from: string, n: number) => Array.from({ length: n }, (_, i) => play(id, at(from, i * 10_000), 10_000))
  await dev.client.publishAsync(topics.playLog(id), JSON.stringify({ batchId: 'a', records: plays('2026-06-01T10:00:00.000Z', 8) }), { qos: 1 })
  t.equal(await count(cloud, id), 5, "the day's 5 stored")
  t.equal(servicesOf(cloud.running.app).playLog.stats.refused.quota, 3, '3 over the quota dropped')
  t.match((await alertEvents(cloud))[0], { detail: { refused: { quota: 3 }, dailyLimit: 5 } })
  t.match((await alertEvents(cloud))[0].message, /3 over the workspace's 5 plays a day/)
  cloud.clock.set('2026-06-02T00:00:01.000Z')
  await dev.client.publishAsync(topics.playLog(id), JSON.stringify({ batchId: 'b', records: plays('2026-06-01T11:00:00.000Z', 2) }), { qos: 1 })
  t.equal(await count(cloud, id), 7, 'a new UTC day, a new quota')
})
