// CAP feeds end to end with real MQTT devices: a pushed Alert puts the emergency in the
// target screens' desired state (message from the feed's language, banner or full screen by
// severity, source on the emergency and its webhook event), an Update replaces the message,
// a Cancel clears it, <expires> clears it on the cloud's clock; duplicates change nothing, a
// Cancel before its Alert is remembered, Test alerts are ignored unless accepted; wrong
// secrets, DTDs, oversized and non-CAP bodies are refused.
import t, { type Test } from 'tap'
import { servicesOf } from '../../src/app.js'
import { connectDevice, startCloud, type Cloud } from '../devicelink/link.js'
import { capDoc, NWS_SENDER } from './capDocs.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'
import { topics, type Reported } from '@svc/shared/mqtt/index'
import { decidePlayback, toPlaying } from '@svc/shared/playback/index'
import { until } from '../fixtures/processes.js'

/** A hang guard: what was awaited is named in the rejection. */
const GUARD = HANG_GUARD_MS

async function push(c: Cloud, feedId: string, secret: string | null, body: string, type = 'application/cap+xml') {
  const res = await fetch(`http://127.0.0.1:${c.running.httpPort}/v1/cap-feeds/${feedId}/alerts`, {
    method: 'POST',
    headers: { 'content-type': type, ...(secret ? { authorization: `Bearer ${secret}` } : {}) },
    body,
  })
  return { status: res.status, body: (await res.json()) as any }
}

async function setup(t: Test) {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_map' })
  const [a, b] = [await c.pair('Lobby'), await c.pair('Hall')]
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const [da, db] = [await connectDevice(t, url, a), await connectDevice(t, url, b)]
  for (const d of [da, db]) await d.next(() => true, GUARD)
  return { c, a, b, da, db }
}

t.test('a push feed: alert, update, cancel and expiry reach the screens; repeats change nothing', async (t) => {
  const { c, a, da, db } = await setup(t)
  const events: any[] = []
  servicesOf(c.running.app).events.subscribe((e) => void events.push(e))
  let res = await c.call('POST', '/v1/cap-feeds', {
    name: 'NWS',
    mode: 'push',
    contentKind: 'media',
    contentId: 'med_map',
    target: { scopeKind: 'screens', screenIds: [a.screenId] },
  })
  t.equal(res.status, 201, JSON.stringify(res.body))
  const feed = res.body.data
  t.match(feed, {
    mode: 'push',
    pushUrl: `/v1/cap-feeds/${feed.id}/alerts`,
    accept: { status: ['Actual'] },
    presentation: { fullscreen: ['Extreme', 'Severe'] },
  })
  t.match(feed.pushSecret, /^capk_[A-Za-z0-9]{40}$/)
  const secret = feed.pushSecret as string
  const got = (await c.call('GET', `/v1/cap-feeds/${feed.id}`)).body.data
  t.notOk('pushSecret' in got, 'the secret is shown once')

  // Wrong secrets and no secret: 401, nothing logged.
  t.equal((await push(c, feed.id, 'capk_wrong', capDoc({ identifier: 'KSTO1055887203' }))).status, 401)
  t.equal((await push(c, feed.id, null, capDoc({ identifier: 'KSTO1055887203' }))).status, 401)
  t.equal((await push(c, 'capf_nope', secret, capDoc({ identifier: 'KSTO1055887203' }))).status, 401)
  t.same((await c.call('GET', `/v1/cap-feeds/${feed.id}/alerts`)).body.data, [])

  // The Alert: a Severe warning, full screen, on screen A only.
  res = await push(c, feed.id, secret, capDoc({ identifier: 'KSTO1055887203' }))
  t.equal(res.status, 202, JSON.stringify(res.body))
  t.match(res.body.data, { state: 'started', emergencyId: /^emg_/ })
  const emgId = res.body.data.emergencyId as string
  const alertId = res.body.data.alertId as string
  const shown = await da.next((s) => s.emergency?.id === emgId, GUARD)
  t.match(
    shown.emergency!.message,
    /^SEVERE THUNDERSTORM WARNING\n.*HAIL.*\nTAKE COVER IN A SUBSTANTIAL SHELTER UNTIL THE STORM PASSES\.\nNATIONAL WEATHER SERVICE SACRAMENTO CA · 2026-06-01T04:55:01-07:00$/s,
  )
  t.equal(shown.emergency!.presentation, undefined, 'Severe is full screen')
  t.equal(db.latest!.emergency, null, 'a screen outside the target is untouched')
  const emg = (await c.call('GET', `/v1/emergencies/${emgId}`)).body.data
  t.match(emg, { status: 'active', presentation: 'fullscreen', source: { capFeedId: feed.id, alertId }, screenCount: 1 })
  await servicesOf(c.running.app).outbox.dispatch()
  t.match(
    events.find((e) => e.event === 'emergency.started'),
    { data: { id: emgId, source: { capFeedId: feed.id, alertId } } },
    'emergency.started carries the source',
  )

  // The same document again changes nothing, and answers what happened the first time.
  res = await push(c, feed.id, secret, capDoc({ identifier: 'KSTO1055887203', headline: 'CHANGED' }))
  t.same(res.body.data, { alertId, state: 'started', emergencyId: emgId })
  t.equal((await c.call('GET', '/v1/emergencies?status=active')).body.data.length, 1)

  // An Update replaces the message (and, Moderate now, shows as a banner).
  res = await push(
    c,
    feed.id,
    secret,
    capDoc({
      identifier: 'KSTO1055887204',
      msgType: 'Update',
      references: `${NWS_SENDER},KSTO1055887203,2026-06-01T04:55:01-07:00`,
      severity: 'Moderate',
      headline: 'STORM WEAKENING',
    }),
  )
  t.match(res.body.data, { state: 'updated', emergencyId: emgId })
  const updated = await da.next((s) => s.emergency?.id === emgId && /^STORM WEAKENING/.test(s.emergency.message ?? ''), GUARD)
  t.equal(updated.emergency!.presentation, 'banner')

  // A Cancel naming the first alert clears it (the update holds it now).
  res = await push(
    c,
    feed.id,
    secret,
    capDoc({ identifier: 'KSTO1055887205', msgType: 'Cancel', references: `${NWS_SENDER},KSTO1055887203,2026-06-01T04:55:01-07:00` }),
  )
  t.match(res.body.data, { state: 'cleared', emergencyId: emgId })
  await da.next((s) => s.emergency === null && s.version > updated.version, GUARD)
  t.equal((await c.call('GET', `/v1/emergencies/${emgId}`)).body.data.status, 'cleared')

  // Expiry: an alert with <expires> is cleared on the cloud's clock when nothing more arrives.
  res = await push(c, feed.id, secret, capDoc({ identifier: 'KSTO2', expires: '2026-06-01T05:30:00-07:00' }))
  t.match(res.body.data, { state: 'started' })
  const expiring = await da.next((s) => s.emergency?.id === res.body.data.emergencyId, GUARD)
  const worker = servicesOf(c.running.app).capWorker
  c.clock.advance(29 * 60_000) // 12:29Z: not yet
  await worker.runOnce()
  t.equal((await c.call('GET', `/v1/emergencies/${res.body.data.emergencyId}`)).body.data.status, 'active')
  c.clock.advance(60_000) // 12:30Z: its expiry
  await worker.runOnce()
  await da.next((s) => s.emergency === null && s.version > expiring.version, GUARD)

  // A Cancel before its Alert: remembered; the Alert arriving later starts nothing.
  res = await push(c, feed.id, secret, capDoc({ identifier: 'KSTO4', msgType: 'Cancel', references: `${NWS_SENDER},KSTO3,2026-06-01T04:55:01-07:00` }))
  t.match(res.body.data, { state: 'ignored', emergencyId: null })
  res = await push(c, feed.id, secret, capDoc({ identifier: 'KSTO3' }))
  t.match(res.body.data, { state: 'ignored', emergencyId: null })

  // A Test alert is ignored (accept.status is Actual only)…
  res = await push(c, feed.id, secret, capDoc({ identifier: 'KSTO5', status: 'Test' }))
  t.match(res.body.data, { state: 'ignored' })
  t.equal((await c.call('GET', '/v1/emergencies?status=active')).body.data.length, 0)

  const log = (await c.call('GET', `/v1/cap-feeds/${feed.id}/alerts`)).body.data
  t.same(
    log.map((r: any) => [r.identifier, r.msgType, r.state]),
    [
      ['KSTO5', 'Alert', 'ignored'],
      ['KSTO3', 'Alert', 'ignored'],
      ['KSTO4', 'Cancel', 'ignored'],
      ['KSTO2', 'Alert', 'expired'],
      ['KSTO1055887205', 'Cancel', 'cleared'],
      ['KSTO1055887204', 'Update', 'updated'],
      ['KSTO1055887203', 'Alert', 'started'],
    ],
  )
  t.match(log[0].reason, /status Test is not accepted/)
  t.match(log[1].reason, /cancelled before it arrived/)
  t.match(log[6], {
    sender: NWS_SENDER,
    severity: 'Severe',
    urgency: 'Immediate',
    certainty: 'Observed',
    event: 'SEVERE THUNDERSTORM',
    headline: 'SEVERE THUNDERSTORM WARNING',
    screensTargeted: 1,
  })

  // …unless the feed accepts it: then shown marked as a test, as a banner by its severity.
  t.equal((await c.call('PATCH', `/v1/cap-feeds/${feed.id}`, { accept: { status: ['Actual', 'Test'] }, target: { scopeKind: 'all' } })).status, 200)
  res = await push(c, feed.id, secret, capDoc({ identifier: 'KSTO6', status: 'Test', severity: 'Minor' }))
  t.match(res.body.data, { state: 'started' })
  for (const d of [da, db]) {
    const s = await d.next((x) => x.emergency?.id === res.body.data.emergencyId, GUARD)
    t.match(s.emergency!.message, /^TEST: SEVERE THUNDERSTORM WARNING/)
    t.equal(s.emergency!.presentation, 'banner')
  }
})

t.test('the message comes from the info in the feed language, else the first; filters ignore what they do not accept', async (t) => {
  const { c, da } = await setup(t)
  const spanish = `
  <info><language>es-US</language><category>Met</category><event>TORMENTA</event><urgency>Immediate</urgency><severity>Extreme</severity><certainty>Observed</certainty><headline>AVISO DE TORMENTA</headline><instruction>BUSQUE REFUGIO.</instruction></info>`
  const feed = (
    await c.call('POST', '/v1/cap-feeds', {
      name: 'ES',
      contentKind: 'media',
      contentId: 'med_map',
      language: 'es',
      accept: { severity: ['Extreme', 'Severe'], events: ['tormenta', 'SEVERE THUNDERSTORM'] },
    })
  ).body.data
  let res = await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'ES1', infosBefore: spanish }), 'text/xml')
  t.match(res.body.data, { state: 'started' })
  const s = await da.next((x) => x.emergency?.id === res.body.data.emergencyId, GUARD)
  t.match(s.emergency!.message, /^AVISO DE TORMENTA\nBUSQUE REFUGIO\.\n/)
  res = await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'ES2', severity: 'Minor' }), 'application/xml')
  t.match(res.body.data, { state: 'ignored' })
  res = await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'ES3', event: 'FLOOD' }))
  t.match(res.body.data, { state: 'ignored' })
  const log = (await c.call('GET', `/v1/cap-feeds/${feed.id}/alerts?limit=2`)).body
  t.match(log.data[0].reason, /event "FLOOD" is not accepted/)
  t.match(log.data[1].reason, /severity Minor is not accepted/)
  t.ok(log.nextCursor)
})

t.test('bad documents: DTDs and entities, oversized, not CAP 1.2 (named element), wrong content type', async (t) => {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_map' })
  await c.pair('A')
  const feed = (await c.call('POST', '/v1/cap-feeds', { name: 'F', contentKind: 'media', contentId: 'med_map' })).body.data
  const xxe = `<?xml version="1.0"?>
<!DOCTYPE alert [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2"><identifier>&xxe;</identifier></alert>`
  let res = await push(c, feed.id, feed.pushSecret, xxe)
  t.equal(res.status, 422)
  t.match(res.body, { error: 'validation_error', message: /DOCTYPE/ })
  const billion = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>${capDoc({ identifier: '&lol2;' }).replace(/^<\?xml[^>]*>/, '')}`
  res = await push(c, feed.id, feed.pushSecret, billion)
  t.equal(res.status, 422, 'no entity expansion')
  res = await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'BIG', description: 'x'.repeat(1024 * 1024) }))
  t.equal(res.status, 413)
  t.equal(res.body.error, 'too_large')
  res = await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'SEV', severity: 'Huge' as never }))
  t.equal(res.status, 422)
  t.match(res.body.message, /alert\/info\[1\]\/severity/)
  res = await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'NS' }).replace('cap:1.2', 'cap:1.1'))
  t.match(res.body.message, /namespace/)
  res = await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'X' }).replace(/<sent>.*<\/sent>/, ''))
  t.match(res.body.message, /alert\/sent: required/)
  res = await push(c, feed.id, feed.pushSecret, '<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2"><identifier>')
  t.equal(res.status, 422)
  res = await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'J' }), 'application/json')
  t.equal(res.status === 415 || res.status === 400, true, `not XML: ${res.status}`)
  t.same((await c.call('GET', `/v1/cap-feeds/${feed.id}/alerts`)).body.data, [], 'nothing logged')
  t.equal((await c.call('GET', '/v1/emergencies')).body.data.length, 0)
})

t.test('feed settings: validation, permissions, tenancy, delete', async (t) => {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_map' })
  await c.pair('A')
  let res = await c.call('POST', '/v1/cap-feeds', { name: 'P', mode: 'pull', contentKind: 'media', contentId: 'med_map' })
  t.equal(res.status, 422, 'pull needs a url')
  res = await c.call('POST', '/v1/cap-feeds', { name: 'P', mode: 'pull', url: 'https://127.0.0.1/alerts.atom', contentKind: 'media', contentId: 'med_map' })
  t.equal(res.status, 400)
  t.equal(res.body.error, 'unsafe_url')
  res = await c.call('POST', '/v1/cap-feeds', {
    name: 'P',
    mode: 'pull',
    url: 'https://api.weather.gov/alerts/active.atom',
    intervalSeconds: 10,
    contentKind: 'media',
    contentId: 'med_map',
  })
  t.equal(res.status, 422, 'intervalSeconds 30 to 3600')
  res = await c.call('POST', '/v1/cap-feeds', {
    name: 'P',
    mode: 'pull',
    url: 'https://api.weather.gov/alerts/active.atom',
    contentKind: 'media',
    contentId: 'med_map',
  })
  t.equal(res.status, 201)
  t.match(res.body.data, { mode: 'pull', intervalSeconds: 60, pushUrl: null })
  t.notOk('pushSecret' in res.body.data)
  res = await c.call('POST', '/v1/cap-feeds', { name: 'X', contentKind: 'media', contentId: 'med_nope' })
  t.equal(res.status, 422, 'unknown content')
  res = await c.call('POST', '/v1/cap-feeds', {
    name: 'X',
    contentKind: 'media',
    contentId: 'med_map',
    presentation: { fullscreen: ['Extreme'], banner: ['Extreme'] },
  })
  t.equal(res.status, 422)
  const feed = (await c.call('POST', '/v1/cap-feeds', { name: 'F', contentKind: 'media', contentId: 'med_map' })).body.data
  t.equal((await c.call('PATCH', `/v1/cap-feeds/${feed.id}`, { url: 'https://x.example/a' })).status, 422, 'url only for pull')

  // A viewer reads, cannot write; another workspace sees nothing (404).
  const services = servicesOf(c.running.app)
  const viewer = (await services.apiKeys.createRoot(c.workspaceId, 'us', 'Viewer', ['emergency.view'])).secret
  t.equal((await c.call('GET', `/v1/cap-feeds/${feed.id}`, undefined, viewer)).status, 200)
  t.equal((await c.call('PATCH', `/v1/cap-feeds/${feed.id}`, { name: 'N' }, viewer)).status, 403)
  const other = await services.workspaces.create('Other', 'us')
  const otherKey = (await services.apiKeys.createRoot(other.id, 'us', 'Owner', 'all')).secret
  t.equal((await c.call('GET', `/v1/cap-feeds/${feed.id}`, undefined, otherKey)).status, 404)
  t.equal((await c.call('GET', `/v1/cap-feeds/${feed.id}/alerts`, undefined, otherKey)).status, 404)
  t.equal((await c.call('DELETE', `/v1/cap-feeds/${feed.id}`, undefined, otherKey)).status, 404)
  t.same((await c.call('GET', '/v1/cap-feeds', undefined, otherKey)).body.data, [])

  t.equal((await c.call('DELETE', `/v1/cap-feeds/${feed.id}`)).status, 200)
  t.equal((await c.call('GET', `/v1/cap-feeds/${feed.id}`)).status, 404)
  t.equal((await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'A' }))).status, 401, 'a deleted feed takes nothing')
})

t.test('a feed without content: its alerts take the screens with their message alone', async (t) => {
  const c = await startCloud(t)
  const a = await c.pair('Lobby')
  const da = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, a)
  await da.next(() => true, GUARD)

  // Created without contentKind / contentId: accepted, and read back with null content.
  let res = await c.call('POST', '/v1/cap-feeds', { name: 'Message only' })
  t.equal(res.status, 201, JSON.stringify(res.body))
  const feed = res.body.data
  t.match(feed, { contentKind: null, contentId: null })
  t.match((await c.call('GET', `/v1/cap-feeds/${feed.id}`)).body.data, { contentKind: null, contentId: null })
  t.equal((await c.call('POST', '/v1/cap-feeds', { name: 'Half', contentKind: 'media' })).status, 422, 'contentKind without contentId')

  // An Extreme alert: an emergency with null content, full screen.
  res = await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'MO1', severity: 'Extreme' }))
  t.match(res.body.data, { state: 'started', emergencyId: /^emg_/ })
  const emgId = res.body.data.emergencyId as string
  t.match((await c.call('GET', `/v1/emergencies/${emgId}`)).body.data, {
    status: 'active',
    contentKind: null,
    contentId: null,
    contentName: null,
    presentation: 'fullscreen',
    message: /^SEVERE THUNDERSTORM WARNING/,
    source: { capFeedId: feed.id },
  })
  t.match((await c.call('GET', '/v1/emergencies?status=active')).body.data, [{ id: emgId, contentKind: null }])

  // The device's desired state: message only, full screen; what an older agent reads is a
  // schedule takeover with nothing to play, shown as a banner over what runs beneath.
  const shown = await da.next((s) => s.emergency?.id === emgId, GUARD)
  t.match(shown.emergency, {
    messageOnly: 'fullscreen',
    contentKind: 'schedule',
    contentId: emgId,
    presentation: 'banner',
    alert: { severity: 'Extreme', headline: 'SEVERE THUNDERSTORM WARNING', instruction: /TAKE COVER/ },
  })
  t.notOk('content' in shown.emergency!, 'no content')
  // The device reports it playing (as the agent decides it): the emergency counts as applied.
  const playing = toPlaying(decidePlayback(shown, c.clock.now()))
  t.same(playing, { source: 'emergency', contentKind: null, contentId: null, emergencyId: emgId })
  const reported: Reported = { version: shown.version, playing, at: c.clock.now().toISOString() }
  await da.client.publishAsync(topics.reported(a.screenId), JSON.stringify(reported), { qos: 1 })
  const s = servicesOf(c.running.app)
  const applied = await until(GUARD, async () => {
    await s.presence.flushReported()
    await s.presence.idle()
    await s.takeoverDelivery.idle()
    const d = (await c.call('GET', `/v1/emergencies/${emgId}`)).body.data.delivery
    return d.applied === 1 ? d : undefined
  })
  t.match(applied, { targeted: 1, published: 1, applied: 1 }, 'the message-only emergency counts as applied')

  // A Moderate update: message-only banner.
  res = await push(
    c,
    feed.id,
    feed.pushSecret,
    capDoc({ identifier: 'MO2', msgType: 'Update', references: `${NWS_SENDER},MO1,2026-06-01T04:55:01-07:00`, severity: 'Moderate', headline: 'EASING' }),
  )
  t.match(res.body.data, { state: 'updated', emergencyId: emgId })
  const banner = await da.next((s) => s.emergency?.messageOnly === 'banner', GUARD)
  t.match(banner.emergency, { id: emgId, presentation: 'banner', alert: { headline: 'EASING' } })

  // Content named later, then removed again.
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_map' })
  res = await c.call('PATCH', `/v1/cap-feeds/${feed.id}`, { contentKind: 'media', contentId: 'med_map' })
  t.match(res.body.data, { contentKind: 'media', contentId: 'med_map' })
  res = await c.call('PATCH', `/v1/cap-feeds/${feed.id}`, { contentKind: null, contentId: null })
  t.match(res.body.data, { contentKind: null, contentId: null })

  // Cancel clears it.
  res = await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'MO3', msgType: 'Cancel', references: `${NWS_SENDER},MO1,2026-06-01T04:55:01-07:00` }))
  t.match(res.body.data, { state: 'cleared', emergencyId: emgId })
  await da.next((s) => s.emergency === null && s.version > banner.version, GUARD)

  // By hand an emergency still names its content (as a cast does): 422 without it.
  res = await c.call('POST', '/v1/emergencies', { message: 'Evacuate' })
  t.equal(res.status, 422)
  t.match(res.body, { error: 'validation_error', message: /content/ })

  // The OpenAPI document says so: content nullable on emergencies and feeds, optional on create.
  const doc = (await c.call('GET', '/v1/openapi.json')).body
  const json = JSON.stringify(doc.paths['/v1/cap-feeds'].post)
  t.notMatch(JSON.stringify(doc.paths['/v1/cap-feeds'].post.requestBody.content['application/json'].schema.required ?? []), /contentKind/)
  t.match(json, /contentKind/)
  const emgSchema = JSON.stringify(doc.paths['/v1/emergencies/{id}'].get.responses['200'])
  t.match(emgSchema, /"contentKind":\{[^}]*"null"|"contentKind":\{"anyOf"/, 'emergency contentKind is nullable')
})
