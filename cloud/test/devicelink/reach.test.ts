// Reach receipts with real MQTT clients as the devices: an emergency to three screens, one
// offline and one whose panel reports off, reads 1 displayed, 1 applied, 1 unreachable per
// screen, and `emergency.reach` reports it once its 60 s have passed; an emergency every
// screen applies reports at once; a cast's receipts page like any list.
import t, { type Test } from 'tap'
import { servicesOf } from '../../src/app.js'
import { connectDevice, reportPlaying, startCloud } from './link.js'

async function setup(t: Test) {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_fire' }).add(c.workspaceId, { kind: 'media', id: 'med_a' })
  const s = servicesOf(c.running.app)
  const reach = async () => (await s.db.all<{ data: string }>("SELECT data FROM events_outbox WHERE event = 'emergency.reach'")).map((e) => JSON.parse(e.data))
  return { c, s, reach }
}

t.test('an emergency to three screens (one offline, one with its panel off): 1 displayed, 1 applied, 1 unreachable; emergency.reach after 60 s', async (t) => {
  const { c, s, reach } = await setup(t)
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const [a, b, off] = [await c.pair('A'), await c.pair('B'), await c.pair('C (offline)')]
  const devA = await connectDevice(t, url, a)
  const devB = await connectDevice(t, url, b)
  await s.presence.idle()
  const e = (await c.call('POST', '/v1/emergencies', { contentKind: 'media', contentId: 'med_fire', scopeKind: 'all', message: 'Leave' })).body.data
  await s.desiredPublisher.idle()
  const receipts = async (q = '') => (await c.call('GET', `/v1/emergencies/${e.id}/screens${q}`)).body

  const published = await receipts()
  // Screens page in id order: paired A, B, C.
  t.same(
    published.data.map((r: { screenName: string; state: string }) => [r.screenName, r.state]),
    [
      ['A', 'published'],
      ['B', 'published'],
      ['C (offline)', 'unreachable'],
    ],
  )
  await reportPlaying(c, devA, (d) => d.emergency?.id === e.id, 'on')
  await reportPlaying(c, devB, (d) => d.emergency?.id === e.id, 'off')
  const byName = Object.fromEntries((await receipts()).data.map((r: { screenName: string }) => [r.screenName, r]))
  t.match(byName.A, { screenId: a.screenId, state: 'displayed', panelPower: 'on', at: c.clock.now().toISOString() })
  t.match(byName.B, { screenId: b.screenId, state: 'applied', panelPower: 'off' })
  t.match(byName['C (offline)'], { screenId: off.screenId, state: 'unreachable', panelPower: 'unknown' })
  t.match((await c.call('GET', `/v1/emergencies/${e.id}`)).body.data.delivery, { targeted: 3, applied: 2 })

  // Paged like any list.
  const first = await receipts('?limit=2&count=1')
  t.equal(first.data.length, 2)
  t.equal(first.total, 3)
  t.equal((await receipts(`?limit=2&cursor=${first.nextCursor}`)).data.length, 1)

  const worker = c.running.app.workers.castExpiry!
  await worker.runOnce()
  t.same(await reach(), [], 'not all applied, and its 60 s have not passed')
  c.clock.advance(60_000)
  await worker.runOnce()
  t.match(await reach(), [{ emergencyId: e.id, targeted: 3, applied: 2, displayed: 1, unreachable: 1, at: c.clock.now().toISOString() }])
  await worker.runOnce()
  t.equal((await reach()).length, 1, 'once')

  t.equal((await c.call('GET', '/v1/emergencies/emg_nope/screens')).status, 404)
  const other = await servicesOf(c.running.app).workspaces.create('Other', 'us')
  const otherKey = (await servicesOf(c.running.app).apiKeys.createRoot(other.id, other.region, 'Owner', 'all')).secret
  t.equal((await c.call('GET', `/v1/emergencies/${e.id}/screens`, undefined, otherKey)).status, 404, 'another workspace: 404')
})

t.test('an emergency every screen applies reports its reach at once; a cast has receipts too', async (t) => {
  const { c, s, reach } = await setup(t)
  const d = await c.pair('Only')
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, d)
  await s.presence.idle()
  const cast = (await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_a', scopeKind: 'screens', screenIds: [d.screenId] })).body.data
  await s.desiredPublisher.idle()
  await reportPlaying(c, dev, (x) => x.casts[0]?.id === cast.id, 'on')
  t.match((await c.call('GET', `/v1/casts/${cast.id}/screens`)).body.data, [{ screenId: d.screenId, state: 'displayed', panelPower: 'on' }])

  const e = (await c.call('POST', '/v1/emergencies', { contentKind: 'media', contentId: 'med_fire', scopeKind: 'all' })).body.data
  await s.desiredPublisher.idle()
  await reportPlaying(c, dev, (x) => x.emergency?.id === e.id, 'on')
  t.match(await reach(), [{ emergencyId: e.id, targeted: 1, applied: 1, displayed: 1, unreachable: 0 }], 'recorded as the last screen applied it')
})
