// Presence intervals from a real MQTT device going on and off on the injected clock, the
// panel's history from its reports, and a cloud restart: a screen whose device never came
// back is offline from the moment its link dropped, not from the restart, with the hourly
// roll-up run before and after it is found gone.
import t from 'tap'
import { topics, type Reported } from '@svc/shared/mqtt/index'
import { servicesOf } from '../../src/app.js'
import { ManualClock } from '../../src/platform/clock.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'
import { connectDevice, droppedAtBroker, startCloud, tempDir, type Cloud, type DeviceClient } from '../devicelink/link.js'

const HOUR = 3_600_000
const MINUTE = 60_000

async function report(c: Cloud, dev: DeviceClient, power: 'on' | 'off'): Promise<void> {
  const at = c.clock.now().toISOString()
  const reported: Reported = { version: 0, playing: { source: 'schedule', contentKind: 'media', contentId: 'med_a' }, panel: { power, at }, at }
  await dev.client.publishAsync(topics.reported(dev.screenId), JSON.stringify(reported), { qos: 1 })
  const s = servicesOf(c.running.app)
  await s.presence.flushReported()
  await s.presence.idle()
  await s.panelHistory.idle()
}

async function availability(c: Cloud, from: string, to: string) {
  const res = await c.call('GET', `/v1/reports/availability?from=${from}&to=${to}`)
  if (res.status !== 200) throw new Error(`availability ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.data.rows[0]
}

t.test('a device on, off and on again, then a restart it never comes back from', async (t) => {
  const dataDir = tempDir(t)
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const content = new InMemoryContentResolver()
  const first = await startCloud(t, { dataDir, fileDb: true, clock, content })
  const url = (c: Cloud) => `mqtt://127.0.0.1:${c.running.mqttPort}`
  const d = await first.pair('Lobby')
  const s1 = servicesOf(first.running.app)
  const start = clock.now().toISOString()

  let dev = await connectDevice(t, url(first), d)
  await dev.next(() => true)
  await s1.presence.idle()
  clock.advance(HOUR)
  await dev.client.endAsync()
  t.ok(await droppedAtBroker(first, d.screenId), 'the broker saw the device go (waited up to HANG_GUARD_MS)')
  await s1.presence.idle()
  const dropped = clock.now().toISOString() // 13:00
  clock.advance(2 * MINUTE) // past the grace
  await s1.presence.sweep()
  const rows = await s1.db.kysely.selectFrom('presence_intervals').selectAll().where('screen_id', '=', d.screenId).execute()
  t.same(
    rows.map((r) => [r.started_at, r.ended_at]),
    [[start, dropped]],
    'one interval, from the connection to the drop (not to the offline announcement)',
  )

  clock.advance(HOUR) // 14:02
  dev = await connectDevice(t, url(first), d)
  await dev.next(() => true)
  await s1.presence.idle()
  await report(first, dev, 'off') // connected, but the panel is dark
  clock.advance(30 * MINUTE)
  await report(first, dev, 'on') // 14:32: showing content
  clock.advance(30 * MINUTE) // 15:02
  let r = await availability(first, start, clock.now().toISOString())
  t.match(r, { onlineSeconds: 7200, outages: 1, longestOutageSeconds: 3720, scheduledSeconds: 3 * 3600 + 120, displaySeconds: 1800 })
  t.equal(r.availability, 7200 / (3 * 3600 + 120))

  // The cloud stops (the device's link drops with it) and is down for three hours.
  const stopped = clock.now().toISOString()
  await first.running.close()
  clock.advance(3 * HOUR) // 18:02
  const second = await startCloud(t, { dataDir, fileDb: true, clock, content, workspace: { id: first.workspaceId, apiKey: first.apiKey } })
  const s2 = servicesOf(second.running.app)
  await s2.presence.idle()
  // The roll-up runs before the screen is found gone: its open stretch is left alone.
  await s2.availabilityRollup.rollAll()
  clock.advance(2 * MINUTE) // the device never comes back
  await s2.presence.sweep()
  const last = await s2.db.kysely
    .selectFrom('presence_intervals')
    .selectAll()
    .where('screen_id', '=', d.screenId)
    .orderBy('started_at', 'desc')
    .executeTakeFirst()
  t.equal(last?.ended_at, stopped, 'offline from when its link dropped, not from the restart')
  clock.advance(HOUR - 4 * MINUTE) // 19:00
  r = await availability(second, start, clock.now().toISOString())
  t.match(r, { onlineSeconds: 7200, outages: 2, longestOutageSeconds: 3 * 3600 + 58 * 60, displaySeconds: 1800 })
  await s2.availabilityRollup.rollAll()
  t.same(await availability(second, start, clock.now().toISOString()), r, 'the same once the roll-up has run over the closed stretches')
})
