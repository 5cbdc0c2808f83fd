// Approvals end to end with a real MQTT device: a held change to an assigned playlist
// never reaches the screen (not even when the screen is republished for another reason),
// and the last approval republishes it with the new version.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { startServer } from '../../src/server.js'
import { testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import { connectDevice, tempDir } from '../devicelink/link.js'
import { form, GIF_3x2, PNG_1x1 } from '../content/fixtures.js'

t.test('screens never show an unapproved version; the approval republishes them', async (t) => {
  const dir = tempDir(t)
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const running = await startServer(testConfig({ dataDir: dir, dbFile: ':memory:', httpPort: 0, mqttPort: 0, host: '127.0.0.1' }), { clock })
  t.after(() => running.close())
  const services = servicesOf(running.app)
  const ws = await services.workspaces.create('Approvals e2e', 'us')
  const owner = (await services.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')).secret
  const base = `http://127.0.0.1:${running.httpPort}`
  const call = async (method: string, path: string, body?: unknown, token: string | null = owner) => {
    const res = await fetch(base + path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return { status: res.status, body: (await res.json()) as any }
  }
  const upload = async (name: string, data: Buffer): Promise<string> => {
    const f = form({ name, file: { filename: name, data } })
    const res = await fetch(`${base}/v1/media/upload`, { method: 'POST', headers: { authorization: `Bearer ${owner}`, ...f.headers }, body: f.payload })
    const id = ((await res.json()) as any).data.id as string
    await services.media.processPending()
    return id
  }

  const store = (await call('POST', '/v1/nodes', { name: 'Store' })).body.data.id
  const ann = (await call('POST', '/v1/users', { email: 'ann@example.com', name: 'Ann', role: 'editor' })).body.data
  t.equal((await call('PUT', `/v1/nodes/${store}/approval-policy`, { required: true, approvers: [ann.id] })).status, 200)
  const editor = (await call('POST', '/v1/api-keys', { name: 'Editor', permissions: ['playlist.view', 'playlist.edit', 'approval.request'] })).body.data.secret
  const a = await upload('a.png', PNG_1x1)
  const b = await upload('b.gif', GIF_3x2)
  const pl = (await call('POST', '/v1/playlists', { name: 'Menu', nodeId: store, items: [{ kind: 'media', id: a }] })).body.data

  const reg = (await call('POST', '/v1/devices/register', {}, null)).body.data
  const screenId = (await call('POST', '/v1/screens/pair', { code: reg.pairingCode, name: 'Till', nodeId: store })).body.data.id as string
  const poll = (await call('GET', `/v1/devices/register/${reg.registrationId}`, undefined, reg.pollSecret)).body.data
  await services.desiredPublisher.idle()
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${running.mqttPort}`, { screenId, deviceSecret: poll.deviceSecret, mqtt: poll.mqtt })
  t.equal((await call('POST', `/v1/screens/${screenId}/assign`, { contentKind: 'playlist', contentId: pl.id })).status, 200)
  const itemsOf = (s: { assignment?: { content?: unknown } | null }) =>
    ((s.assignment?.content as { items?: { contentId: string }[] } | undefined)?.items ?? []).map((i) => i.contentId)
  const first = await dev.next((s) => itemsOf(s).includes(a))
  t.same(itemsOf(first), [a])

  const held = await call('PATCH', `/v1/playlists/${pl.id}`, { name: 'Menu v2', items: [{ kind: 'media', id: b }] }, editor)
  t.equal(held.status, 200)
  const requestId = held.body.data.approval.requestId
  // Republish the screen for another reason: it must still carry the approved version.
  await services.desiredPublisher.markDirty(ws.id, [screenId])
  await services.desiredPublisher.idle()
  const again = await dev.next((s) => s.version > first.version)
  t.same(itemsOf(again), [a], 'a republish while held keeps the approved version')
  t.equal((again.assignment?.content as { name?: string } | undefined)?.name, 'Menu')
  t.notOk(
    dev.states.some((s) => itemsOf(s).includes(b)),
    'no desired state ever carried the unapproved version',
  )

  const decided = await call('POST', `/v1/approvals/${requestId}/approve`, {}, ann.sessionToken)
  t.equal(decided.status, 200)
  t.equal(decided.body.data.state, 'approved')
  const live = await dev.next((s) => itemsOf(s).includes(b))
  t.same(itemsOf(live), [b], 'the approval republished the screen with the new version')
  t.equal((live.assignment?.content as { name?: string } | undefined)?.name, 'Menu v2')
})
