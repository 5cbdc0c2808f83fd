// Casts and emergencies end to end: a real cloud and a real MQTT device receiving its
// retained desired state (create, clear, expiry, replacement, emergency over a cast, an
// offline device catching up on reconnect).
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { topics } from '@svc/shared/mqtt/index'
import { connectDevice, startCloud } from './link.js'

t.test('cast create → device gets the cast in a newer retained desired state; clear → gone', async (t) => {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_promo' }, { content: { name: 'Promo', url: 'https://cdn.example/promo.mp4', mimeType: 'video/mp4' } })
  const d = await c.pair('Lobby')
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, d)
  const first = await dev.next(() => true)
  t.equal(first.version, 1, 'the paired screen has its first desired state, retained')
  t.same(first.casts, [])

  const res = await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_promo', expiresAt: '2026-06-01T13:00:00Z', contentName: 'Promo' })
  t.equal(res.status, 201)
  const cast = res.body.data
  t.match(cast, {
    kind: 'cast',
    status: 'active',
    contentKind: 'media',
    contentId: 'med_promo',
    scopeKind: 'all',
    screenCount: 1,
    triggeredAt: '2026-06-01T12:00:00.000Z',
    expiresAt: '2026-06-01T13:00:00.000Z',
  })
  t.match(cast.id, /^cast_/)
  const withCast = await dev.next((s) => s.casts.length === 1)
  t.ok(withCast.version > first.version, 'version increased')
  t.match(withCast.casts[0], {
    id: cast.id,
    contentKind: 'media',
    contentId: 'med_promo',
    expiresAt: '2026-06-01T13:00:00.000Z',
    content: { url: 'https://cdn.example/promo.mp4' },
  })

  const cleared = await c.call('POST', `/v1/casts/${cast.id}/clear`)
  t.equal(cleared.status, 200)
  t.match(cleared.body.data, { status: 'cleared', endedAt: '2026-06-01T12:00:00.000Z' })
  const after = await dev.next((s) => s.version > withCast.version)
  t.same(after.casts, [], 'the screen returns to its assignment at once')
  const again = await c.call('POST', `/v1/casts/${cast.id}/clear`)
  t.equal(again.status, 409)
  t.equal(again.body.error, 'already_inactive')
  const screen = (await c.call('GET', `/v1/screens/${d.screenId}`)).body.data
  t.equal(screen.desiredVersion, after.version, 'the screen shows the version it was last sent')
})

t.test('expiry (ManualClock + worker) ends the cast and republishes; a newer cast replaces the older', async (t) => {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_a' }).add(c.workspaceId, { kind: 'playlist', id: 'pl_b' })
  const d = await c.pair()
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, d)
  const a = (await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_a', expiresAt: Date.parse('2026-06-01T12:10:00Z') })).body.data
  t.equal(a.expiresAt, '2026-06-01T12:10:00.000Z', 'epoch milliseconds accepted')
  const s1 = await dev.next((s) => s.casts[0]?.id === a.id)

  const worker = c.running.app.workers.castExpiry
  c.clock.advance(9 * 60_000)
  await worker.runOnce()
  t.equal((await c.call('GET', `/v1/casts/${a.id}`)).body.data.status, 'active', 'not yet')
  c.clock.advance(60_000)
  await worker.runOnce()
  t.match((await c.call('GET', `/v1/casts/${a.id}`)).body.data, { status: 'expired', endedAt: '2026-06-01T12:10:00.000Z' })
  const s2 = await dev.next((s) => s.version > s1.version)
  t.same(s2.casts, [])

  const b = (await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_a' })).body.data
  const b2 = (await c.call('POST', '/v1/casts', { contentKind: 'playlist', contentId: 'pl_b', scopeKind: 'screens', screenIds: [d.screenId] })).body.data
  t.match((await c.call('GET', `/v1/casts/${b.id}`)).body.data, { status: 'replaced', replacedBy: b2.id })
  const s3 = await dev.next((s) => s.casts[0]?.id === b2.id)
  t.equal(s3.casts.length, 1, 'only the newer cast is sent')
  t.equal(s3.casts[0]!.expiresAt, null, 'no expiresAt: until cleared')
  const list = (await c.call('GET', '/v1/casts')).body.data
  t.same(
    list.map((x: { id: string }) => x.id),
    [b2.id, b.id, a.id],
    'newest first',
  )
  t.same(
    (await c.call('GET', '/v1/casts?status=ended')).body.data.map((x: { id: string }) => x.id),
    [b.id, a.id],
  )
  t.same(
    (await c.call('GET', '/v1/casts?status=active&limit=1')).body.data.map((x: { id: string }) => x.id),
    [b2.id],
  )
})

t.test('emergency over a cast: emergency on top and the cast paused; clear → the cast is back', async (t) => {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_a' }).add(c.workspaceId, { kind: 'media', id: 'med_fire' })
  const events: { event: string; data: Record<string, unknown> }[] = []
  servicesOf(c.running.app).events.subscribe((e) => void events.push(e))
  const d = await c.pair()
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, d)
  const cast = (await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_a' })).body.data
  const s1 = await dev.next((s) => s.casts.length === 1)

  const res = await c.call('POST', '/v1/emergencies', { contentKind: 'media', contentId: 'med_fire', message: 'Evacuate' })
  t.equal(res.status, 201)
  const emg = res.body.data
  t.match(emg, { status: 'active', screenCount: 1, message: 'Evacuate' })
  t.match(emg.id, /^emg_/)
  const s2 = await dev.next((s) => s.emergency !== null)
  t.ok(s2.version > s1.version)
  t.match(s2.emergency, { id: emg.id, contentId: 'med_fire', message: 'Evacuate' })
  t.match(s2.casts, [{ id: cast.id, paused: true }], 'the cast stays listed, paused')
  t.equal((await c.call('GET', `/v1/casts/${cast.id}`)).body.data.status, 'paused')
  t.equal((await c.call('GET', `/v1/emergencies/${emg.id}`)).body.data.status, 'active')
  t.same(
    (await c.call('GET', '/v1/emergencies?status=active')).body.data.map((x: { id: string }) => x.id),
    [emg.id],
  )

  const cleared = await c.call('POST', `/v1/emergencies/${emg.id}/clear`)
  t.equal(cleared.status, 200)
  t.match(cleared.body.data, { status: 'cleared', screensReleased: 1 })
  const s3 = await dev.next((s) => s.version > s2.version)
  t.equal(s3.emergency, null)
  t.match(s3.casts, [{ id: cast.id }])
  t.notOk((s3.casts[0] as { paused?: boolean }).paused, 'no longer paused')
  t.equal((await c.call('GET', `/v1/casts/${cast.id}`)).body.data.status, 'active', 'the cast resumed')
  const again = await c.call('POST', `/v1/emergencies/${emg.id}/clear`)
  t.equal(again.status, 409)
  t.equal(again.body.error, 'already_inactive')
  t.same(
    events.map((e) => e.event).filter((e) => e.startsWith('emergency.')),
    ['emergency.started', 'emergency.cleared'],
  )
  t.match(events.find((e) => e.event === 'emergency.started')!.data, { id: emg.id, screenCount: 1 })
})

t.test('a device offline while a cast is created and expires gets exactly the latest state on reconnect', async (t) => {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_a' }).add(c.workspaceId, { kind: 'media', id: 'med_b' })
  const d = await c.pair()
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const dev = await connectDevice(t, url, d)
  const v1 = await dev.next(() => true)
  await dev.client.endAsync() // goes away; the session stays
  const a = (await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_a', expiresAt: '2026-06-01T12:05:00Z' })).body.data
  c.clock.advance(5 * 60_000)
  await c.running.app.workers.castExpiry.runOnce()
  const b = (await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_b' })).body.data
  await servicesOf(c.running.app).desiredPublisher.idle() // casts answer before their publishing ends
  const current = await servicesOf(c.running.app).desiredState.build(c.workspaceId, d.screenId)

  const back = await connectDevice(t, url, d, {}, false)
  // Queued copies arrive through the session; the device keeps only the highest version.
  const got = await back.next((s) => s.version === current!.version)
  t.equal(got.version, v1.version + 3, 'every change took a version')
  t.same(
    got.casts.map((x) => x.id),
    [b.id],
    'the expired cast is gone, the newer one is there',
  )
  t.equal(back.latest!.version, current!.version, 'nothing newer or stale wins')
  t.notOk(back.latest!.casts.some((x) => x.id === a.id))

  // a fresh subscription also gets the retained copy: the same latest state
  const fresh = await connectDevice(t, url, d, { clean: true }, true)
  const retained = await fresh.next(() => true)
  t.equal(retained.version, current!.version)
  t.equal(topics.desired(d.screenId), `svc/v1/screens/${d.screenId}/desired`)
})
