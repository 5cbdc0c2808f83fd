// Drift on the cloud with a real MQTT client as the device: unknown before a report, in sync
// when the device applies and plays what it was told, drifting when a new desired state goes
// unapplied past the grace (the periodic sweep finds it) or when it plays something else;
// `screen.drifting` / `screen.in_sync` go through the events outbox; a `drift` alert rule
// opens after its minutes and closes when the screen is back in sync; offline is unknown.
import t, { type Test } from 'tap'
import { topics, type Playing } from '@svc/shared/mqtt/index'
import { servicesOf } from '../../src/app.js'
import { connectDevice, droppedAtBroker, startCloud, type DeviceClient } from '../devicelink/link.js'

const NONE: Playing = { source: 'none', contentKind: null, contentId: null }

async function setup(t: Test) {
  const cloud = await startCloud(t)
  cloud.content.add(cloud.workspaceId, { kind: 'media', id: 'med_a' }).add(cloud.workspaceId, { kind: 'media', id: 'med_b' })
  const d = await cloud.pair('Lobby')
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${cloud.running.mqttPort}`, d)
  const s = servicesOf(cloud.running.app)
  const settle = async () => {
    await s.presence.idle()
    await s.drift.idle()
  }
  const report = async (version: number, playing: Playing) => {
    await dev.client.publishAsync(topics.reported(d.screenId), JSON.stringify({ version, playing, at: cloud.clock.now().toISOString() }), {
      qos: 1,
      retain: true,
    })
    await s.presence.flushReported()
    await settle()
  }
  const drift = async () => (await cloud.call('GET', `/v1/screens/${d.screenId}`)).body.data.drift
  const events = async () =>
    (await s.db.all<{ event: string; data: string }>("SELECT event, data FROM events_outbox WHERE event LIKE 'screen.%' ORDER BY id")).filter(
      (e) => e.event.startsWith('screen.drifting') || e.event.startsWith('screen.in_sync'),
    )
  await settle()
  return { cloud, s, screenId: d.screenId, dev, report, drift, events, settle }
}

const versionOf = (dev: DeviceClient) => dev.latest?.version ?? 0

t.test('unknown before a report; in sync when the device applies and plays what it was told', async (t) => {
  const { cloud, screenId, dev, report, drift, events } = await setup(t)
  t.match(await drift(), { state: 'unknown', since: null, items: [] })
  await report(versionOf(dev), NONE)
  t.match(await drift(), { state: 'in_sync', items: [] })
  t.same(await events(), [], 'unknown → in sync is not news')
  t.equal((await cloud.call('GET', '/v1/screens?drift=in_sync')).body.data[0]?.id, screenId)
  t.same((await cloud.call('GET', '/v1/screens?drift=drifting')).body.data, [])
  t.equal((await cloud.call('GET', '/v1/screens?drift=sideways')).status, 422)
})

t.test('a new desired state left unapplied past the grace drifts (content); applied, it is in sync; a drift alert opens and closes', async (t) => {
  const { cloud, s, screenId, dev, report, drift, events, settle } = await setup(t)
  await report(versionOf(dev), NONE)
  const rule = await cloud.call('POST', '/v1/alert-rules', { name: 'Drifting screens', config: { codes: ['drift'], thresholds: { minutes: 5 } } })
  t.equal(rule.status, 201, JSON.stringify(rule.body))

  t.equal((await cloud.call('POST', `/v1/screens/${screenId}/assign`, { contentKind: 'media', contentId: 'med_a' })).status, 200)
  const v = (await dev.next((d) => d.assignment?.contentId === 'med_a')).version
  await cloud.running.app.workers.alerts!.runOnce()
  await settle()
  t.match(await drift(), { state: 'in_sync' }, 'within the grace the device may still be applying it')

  cloud.clock.advance(61_000)
  await cloud.running.app.workers.alerts!.runOnce()
  await settle()
  const drifting = await drift()
  t.match(drifting, {
    state: 'drifting',
    since: cloud.clock.now().toISOString(),
    items: [{ field: 'content', desired: { version: v }, reported: { version: v - 1 } }],
  })
  t.match(await events(), [{ event: 'screen.drifting' }])
  t.match(JSON.parse((await events())[0]!.data), { screenId, screenName: 'Lobby', state: 'drifting', items: [{ field: 'content' }] })

  const open = async () => (await cloud.call('GET', `/v1/alert-events?state=open&code=drift`)).body.data
  t.same(await open(), [], 'not before its 5 minutes')
  cloud.clock.advance(5 * 60_000)
  await cloud.running.app.workers.alerts!.runOnce()
  t.match(await open(), [{ code: 'drift', screenId, message: /^Lobby has been drifting for 5 minute\(s\): content is/ }])

  // Applied and playing what it should: in sync, the event, the alert closes.
  await report(v, { source: 'assignment', contentKind: 'media', contentId: 'med_a' })
  t.match(await drift(), { state: 'in_sync', items: [] })
  t.match(
    (await events()).map((e) => e.event),
    ['screen.drifting', 'screen.in_sync'],
  )
  t.same(await open(), [], 'the alert closed')
  void s
})

t.test('playing something other than its desired state decides is drift; offline is unknown, without an event', async (t) => {
  const { cloud, screenId, dev, report, drift, events, settle } = await setup(t)
  await cloud.call('POST', `/v1/screens/${screenId}/assign`, { contentKind: 'media', contentId: 'med_a' })
  const v = (await dev.next((d) => d.assignment?.contentId === 'med_a')).version
  await report(v, { source: 'assignment', contentKind: 'media', contentId: 'med_b' })
  t.match(await drift(), {
    state: 'drifting',
    items: [
      {
        field: 'content',
        desired: { version: v, playing: { source: 'assignment', contentId: 'med_a' } },
        reported: { version: v, playing: { contentId: 'med_b' } },
      },
    ],
  })
  const since = (await drift()).items[0].since
  cloud.clock.advance(10_000)
  await report(v, { source: 'assignment', contentKind: 'media', contentId: 'med_b' })
  t.equal((await drift()).items[0].since, since, 'an item keeps its since while it lasts')

  await dev.client.endAsync(true)
  t.ok(await droppedAtBroker(cloud, screenId))
  await servicesOf(cloud.running.app).presence.idle()
  cloud.clock.advance(60_000)
  await servicesOf(cloud.running.app).presence.sweep()
  await settle()
  const gone = await drift()
  t.equal(gone.state, 'unknown', 'offline: unknown')
  t.same(
    (await events()).map((e) => e.event),
    ['screen.drifting'],
    'going offline sends no in_sync',
  )
})

t.test('a panel that does not obey its hours: screen.panel_mismatch once, recorded with screen.drifting in the order of the batch', async (t) => {
  const { cloud, s, screenId, dev, settle } = await setup(t)
  const send = async (at: string) => {
    const panel = { power: 'off', intended: 'on', obeying: false, at }
    await dev.client.publishAsync(topics.reported(screenId), JSON.stringify({ version: versionOf(dev), playing: NONE, at, panel }), { qos: 1, retain: true })
    await s.presence.flushReported()
    await settle()
  }
  const rows = () =>
    s.db.all<{ event: string; data: string }>(
      "SELECT event, data FROM events_outbox WHERE event IN ('screen.panel_mismatch', 'screen.drifting', 'screen.in_sync') ORDER BY id",
    )
  await send(cloud.clock.now().toISOString())
  const first = await rows()
  t.same(
    first.map((e) => e.event),
    ['screen.panel_mismatch', 'screen.drifting'],
  )
  t.match(JSON.parse(first[0]!.data), { screenId, screenName: 'Lobby', intended: 'on', power: 'off' })
  t.match(JSON.parse(first[1]!.data), { screenId, state: 'drifting', items: [{ field: 'panel.power', obeying: false }] })
  cloud.clock.advance(1000)
  await send(cloud.clock.now().toISOString())
  t.equal((await rows()).length, 2, 'the same mismatch again is not news')
})
