// What a device reports, end to end: a real MQTT client publishes `reported` and
// GET /v1/screens/<id> shows only the contract's fields, bounded. Unknown fields (markup
// included) are dropped, an out-of-bounds report is ignored, and a row stored before the
// bounds existed is served through the same parser.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { topics } from '@svc/shared/mqtt/index'
import { connectDevice, startCloud, type Cloud } from './link.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const AT = '2026-06-01T12:00:00.000Z'

async function reportedOf(cloud: Cloud, screenId: string, pred: (r: any) => boolean, ms = HANG_GUARD_MS): Promise<any> {
  const until = Date.now() + ms
  for (;;) {
    const r = (await cloud.call('GET', `/v1/screens/${screenId}`)).body.data.reported
    if (r && pred(r)) return r
    if (Date.now() > until) throw new Error(`reported never matched; last ${JSON.stringify(r)}`)
    await new Promise((res) => setTimeout(res, 20))
  }
}

t.test('a device publish keeps only the contract fields, and GET returns nothing else', async (t) => {
  const cloud = await startCloud(t)
  const d = await cloud.pair()
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${cloud.running.mqttPort}`, d)
  const clean = {
    version: 1,
    playing: { source: 'cast', contentKind: 'media', contentId: 'med_1', castId: 'cast_1' },
    panel: { power: 'on', input: 'HDMI1', volume: 20, mute: false, at: AT },
    storage: { usedBytes: 5, totalBytes: 10 },
    at: AT,
  }
  const dirty = {
    ...clean,
    html: '<script>alert(document.cookie)</script>',
    blob: 'x'.repeat(200_000),
    playing: { ...clean.playing, name: '<img src=x onerror=alert(1)>' },
    panel: { ...clean.panel, firmware: { nested: [1, 2, 3] } },
    storage: { ...clean.storage, disks: ['sda'] },
  }
  await dev.client.publishAsync(topics.reported(d.screenId), JSON.stringify(dirty).replace('{', '{"__proto__":{"admin":true},'), { qos: 1 })
  const got = await reportedOf(cloud, d.screenId, (r) => r.version === 1)
  t.same(got, clean, 'only the contract fields')
  const raw = await fetch(`http://127.0.0.1:${cloud.running.httpPort}/v1/screens/${d.screenId}`, { headers: { authorization: `Bearer ${cloud.apiKey}` } }).then(
    (r) => r.text(),
  )
  t.notOk(/script|onerror|blob|firmware|disks|__proto__|admin/.test(raw), 'nothing else in the answer body')
  const row = await servicesOf(cloud.running.app).db.get<{ reported: string }>('SELECT reported FROM screens WHERE id = ?', [d.screenId])
  t.same(JSON.parse(row!.reported), clean, 'only the contract fields are stored')

  // Out of bounds: ignored whole, the last good report stays.
  const bad = [
    { ...clean, version: 2, playing: { ...clean.playing, contentId: 'm'.repeat(10_000) } },
    { ...clean, version: 2, panel: { ...clean.panel, input: 'i'.repeat(65) } },
    { ...clean, version: 2, at: `2026-06-01T12:00:00.${'9'.repeat(50_000)}Z` },
    { ...clean, version: 2 ** 60 },
  ]
  for (const b of bad) await dev.client.publishAsync(topics.reported(d.screenId), JSON.stringify(b), { qos: 1 })
  await dev.client.publishAsync(topics.reported(d.screenId), JSON.stringify({ ...clean, version: 3 }), { qos: 1 })
  const after = await reportedOf(cloud, d.screenId, (r) => r.version !== 1)
  t.equal(after.version, 3, 'the out-of-bounds reports were ignored, the next good one kept')
})

t.test('a row stored before the bounds is served through the parser', async (t) => {
  const cloud = await startCloud(t)
  const d = await cloud.pair()
  const db = servicesOf(cloud.running.app).db
  const old = { version: 4, playing: { source: 'none', contentKind: null, contentId: null, evil: '<script>' }, at: AT, html: '<script>x</script>' }
  await db.run('UPDATE screens SET reported = ?, reported_at = ? WHERE id = ?', [JSON.stringify(old), AT, d.screenId])
  const got = (await cloud.call('GET', `/v1/screens/${d.screenId}`)).body.data
  t.same(got.reported, { version: 4, playing: { source: 'none', contentKind: null, contentId: null }, at: AT })
  await db.run('UPDATE screens SET reported = ? WHERE id = ?', [JSON.stringify({ anything: 'x'.repeat(1000) }), d.screenId])
  t.equal((await cloud.call('GET', `/v1/screens/${d.screenId}`)).body.data.reported, null, 'a stored report that never met the contract shows as none')
})
