// Screen status from the device link: connect / Last Will / reconnect, debounced on the
// injected clock; reported state stored and shown; events on the bus and listeners.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { topics } from '@svc/shared/mqtt/index'
import { connectDevice, droppedAtBroker, startCloud } from './link.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const status = (s: 'online' | 'offline') => JSON.stringify({ status: s, at: '2026-06-01T12:00:00.000Z' })

t.test('online at once; a drop is offline only after the grace period; a quick reconnect is a flap', async (t) => {
  const c = await startCloud(t)
  const { presence, events } = servicesOf(c.running.app)
  const seen: { event: string; data: Record<string, unknown> }[] = []
  events.subscribe((e) => void (e.event.startsWith('screen.') && seen.push(e)))
  const changes: string[] = []
  presence.onScreenStatus((ch) => void changes.push(`${ch.screenId}:${ch.status}`))
  const d = await c.pair('Foyer')
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const will = { topic: topics.status(d.screenId), payload: Buffer.from(status('offline')), qos: 1 as const, retain: true }
  const screen = async () => (await c.call('GET', '/v1/screens')).body.data.find((s: { id: string }) => s.id === d.screenId)

  t.equal((await screen()).status, 'offline', 'a new screen is offline')
  const dev = await connectDevice(t, url, d, { will })
  await dev.client.publishAsync(topics.status(d.screenId), status('online'), { qos: 1, retain: true })
  await presence.idle()
  t.match(await screen(), { status: 'online', lastSeenAt: '2026-06-01T12:00:00.000Z' })
  t.same(
    seen.map((e) => e.event),
    ['screen.online'],
  )
  t.match(seen[0]!.data, { screenId: d.screenId, screenName: 'Foyer', nodeId: null, at: '2026-06-01T12:00:00.000Z' })

  // an unclean drop (the Last Will fires), back within the grace period: nothing announced
  c.clock.advance(1000)
  dev.client.stream.destroy()
  t.ok(await droppedAtBroker(c, d.screenId), 'the broker saw the connection close')
  await presence.idle()
  t.equal((await screen()).status, 'online', 'still online during the grace period')
  c.clock.advance(10_000)
  const again = await connectDevice(t, url, d, { will })
  await presence.idle()
  c.clock.advance(60_000)
  await presence.sweep()
  t.equal((await screen()).status, 'online')
  t.same(
    seen.map((e) => e.event),
    ['screen.online'],
    'a flap announces nothing',
  )

  // a real outage: offline after presence.offlineAfterMs without reconnecting
  again.client.stream.destroy()
  t.ok(await droppedAtBroker(c, d.screenId), 'the broker saw the connection close')
  await presence.idle()
  const droppedAt = c.clock.now().toISOString()
  c.clock.advance(presence.offlineAfterMs - 1)
  await presence.sweep()
  t.equal((await screen()).status, 'online', 'not before the grace period ends')
  c.clock.advance(1)
  await presence.sweep()
  t.match(await screen(), { status: 'offline', lastSeenAt: droppedAt })
  t.same(
    seen.map((e) => e.event),
    ['screen.online', 'screen.offline'],
  )
  t.match(seen[1]!.data, { screenId: d.screenId, since: droppedAt, at: c.clock.now().toISOString() })

  c.clock.advance(5000)
  await connectDevice(t, url, d, { will })
  await presence.idle()
  t.equal((await screen()).status, 'online')
  t.match(seen[2], { event: 'screen.online', data: { since: droppedAt } })
  t.same(changes, [`${d.screenId}:online`, `${d.screenId}:offline`, `${d.screenId}:online`], 'onScreenStatus listeners see the same transitions')
})

t.test('reported state is validated, stored, shown on the screen and passed to listeners', async (t) => {
  const c = await startCloud(t)
  const { presence } = servicesOf(c.running.app)
  const reports: unknown[] = []
  presence.onReported((r) => void reports.push(r.reported))
  const d = await c.pair()
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, d)
  const reported = {
    version: 1,
    playing: { source: 'assignment', contentKind: 'playlist', contentId: 'pl_1' },
    panel: { power: 'on', input: 'hdmi1', at: '2026-06-01T12:00:00.000Z' },
    storage: { usedBytes: 10, totalBytes: 100 },
    at: '2026-06-01T12:00:00.000Z',
  }
  await dev.client.publishAsync(topics.reported(d.screenId), JSON.stringify({ version: -1 }), { qos: 1, retain: true })
  await dev.client.publishAsync(topics.reported(d.screenId), JSON.stringify(reported), { qos: 1, retain: true })
  await presence.idle()
  t.same(reports, [reported], 'the invalid message was ignored')
  const s = (await c.call('GET', `/v1/screens/${d.screenId}`)).body.data
  t.same(s.reported, reported)
  t.equal(s.reportedAt, '2026-06-01T12:00:00.000Z')
})

t.test("the agent's version from its reports: on the screen, in the list, and cleared by a report without one", async (t) => {
  const c = await startCloud(t)
  const { presence } = servicesOf(c.running.app)
  const d = await c.pair('Versioned')
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, d)
  const report = (extra: object) => ({ version: 0, playing: { source: 'none', contentKind: null, contentId: null }, at: c.clock.now().toISOString(), ...extra })
  const listed = async () => (await c.call('GET', '/v1/screens')).body.data.find((s: { id: string }) => s.id === d.screenId)
  t.equal((await c.call('GET', `/v1/screens/${d.screenId}`)).body.data.agentVersion, null, 'null before any report')
  t.equal((await listed()).agentVersion, null)
  await dev.client.publishAsync(topics.reported(d.screenId), JSON.stringify(report({ agentVersion: '1.4.2' })), { qos: 1 })
  await presence.idle()
  const s = (await c.call('GET', `/v1/screens/${d.screenId}`)).body.data
  t.equal(s.agentVersion, '1.4.2')
  t.equal(s.reported.agentVersion, '1.4.2', 'and in the report as stored')
  t.equal((await listed()).agentVersion, '1.4.2', 'the list shows it too (its kept pages dropped by the write)')
  await dev.client.publishAsync(topics.reported(d.screenId), JSON.stringify(report({ agentVersion: 'bad version!' })), { qos: 1 })
  await presence.idle()
  t.equal((await listed()).agentVersion, '1.4.2', 'a report whose version breaks the contract is ignored whole')
  c.clock.advance(1000)
  await dev.client.publishAsync(topics.reported(d.screenId), JSON.stringify(report({})), { qos: 1 })
  await presence.idle()
  t.equal((await listed()).agentVersion, null, 'an agent that stopped saying (an older one put back) shows none')
})

t.test('presence over WebSocket follows the connection the same way', async (t) => {
  const c = await startCloud(t)
  const { presence } = servicesOf(c.running.app)
  const d = await c.pair('Web')
  const screen = async () => (await c.call('GET', `/v1/screens/${d.screenId}`)).body.data.status
  const dev = await connectDevice(t, `ws://127.0.0.1:${c.running.httpPort}/mqtt`, d)
  await presence.idle()
  t.equal(await screen(), 'online')
  dev.client.stream.destroy()
  t.ok(await droppedAtBroker(c, d.screenId), 'the broker saw the connection close')
  await presence.idle()
  c.clock.advance(presence.offlineAfterMs)
  await presence.sweep()
  t.equal(await screen(), 'offline', 'offline one grace after the WebSocket closed')
})

t.test('what a device says on its status topic does not move presence: the connection does', async (t) => {
  const c = await startCloud(t)
  const { presence } = servicesOf(c.running.app)
  const d = await c.pair('Says')
  const screen = async () => (await c.call('GET', `/v1/screens/${d.screenId}`)).body.data.status
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, d)
  await dev.client.publishAsync(topics.status(d.screenId), status('offline'), { qos: 1, retain: true })
  await presence.idle()
  c.clock.advance(presence.offlineAfterMs + 1)
  await presence.sweep()
  t.equal(await screen(), 'online', 'connected, whatever it says')
})

t.test('devices dropping together: one read and one write for the run, each screen away, then offline', async (t) => {
  const c = await startCloud(t)
  const { presence, db } = servicesOf(c.running.app)
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const devices: Awaited<ReturnType<typeof c.pair>>[] = []
  for (let i = 0; i < 6; i++) devices.push(await c.pair(`S${i}`))
  const clients: Awaited<ReturnType<typeof connectDevice>>[] = []
  for (const d of devices) clients.push(await connectDevice(t, url, d))
  await presence.idle()
  const screens = async () => (await c.call('GET', '/v1/screens')).body.data as { id: string; status: string; lastSeenAt: string }[]
  t.ok((await screens()).every((s) => s.status === 'online'))

  // Hold the presence queue while every device drops, so the closes wait as one run.
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  void (presence as unknown as { enqueue(fn: () => Promise<void>): Promise<void> }).enqueue(() => held)
  c.clock.advance(1000)
  const droppedAt = c.clock.now().toISOString()
  for (const d of clients) d.client.stream.destroy()
  const live = () => devices.filter((d) => servicesOf(c.running.app).broker.isConnected(d.screenId)).length
  for (const guardEnd = Date.now() + HANG_GUARD_MS; live() > 0 && Date.now() < guardEnd; ) await new Promise((r) => setTimeout(r, 20))
  t.equal(live(), 0, 'every connection closed')
  const statements: string[] = []
  const executor = (db.kysely as unknown as { getExecutor(): { executeQuery(q: { sql: string }, ...a: unknown[]): Promise<unknown> } }).getExecutor()
  const run = executor.executeQuery.bind(executor)
  executor.executeQuery = (q, ...a) => (statements.push(q.sql), run(q, ...a))
  t.teardown(() => void (executor.executeQuery = run))
  release()
  await presence.idle()
  executor.executeQuery = run
  const onScreens = statements.filter((s) => /"screens"/.test(s))
  t.equal(onScreens.length, 2, `one read and one update for six drops: ${onScreens.join(' | ')}`)
  t.ok(
    (await screens()).every((s) => s.status === 'online' && s.lastSeenAt === droppedAt),
    'each screen: last seen when it dropped, online during the grace period',
  )
  c.clock.advance(presence.offlineAfterMs)
  await presence.sweep()
  t.ok(
    (await screens()).every((s) => s.status === 'offline'),
    'each announced offline after the grace period',
  )
})
