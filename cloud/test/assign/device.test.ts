// Assignment end to end: a real cloud on the real content library (startServer, temp data
// dir) and a real MQTT client as the device. Assign → the device's desired state carries
// the described content with a signed media URL that downloads without a bearer; recall
// pulls it, restore puts it back; a recalled file drops out of an assigned playlist.
import { servicesOf } from '../../src/app.js'
import t, { type Test } from 'tap'
import { startServer } from '../../src/server.js'
import { testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import { connectDevice, tempDir } from '../devicelink/link.js'
import { form, GIF_3x2, PNG_1x1 } from '../content/fixtures.js'

async function start(t: Test) {
  const dir = tempDir(t)
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const running = await startServer(testConfig({ dataDir: dir, dbFile: ':memory:', httpPort: 0, mqttPort: 0, host: '127.0.0.1' }), { clock })
  t.after(() => running.close())
  const services = servicesOf(running.app)
  const ws = await services.workspaces.create('Assign e2e', 'us')
  const apiKey = (await services.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')).secret
  const base = `http://127.0.0.1:${running.httpPort}`
  const call = async (method: string, path: string, body?: unknown, token: string | null = apiKey) => {
    const res = await fetch(base + path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return { status: res.status, body: (await res.json()) as any }
  }
  const upload = async (name: string, data: Buffer): Promise<string> => {
    const f = form({ name, file: { filename: name, data } })
    const res = await fetch(`${base}/v1/media/upload`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, ...f.headers }, body: f.payload })
    const id = ((await res.json()) as any).data.id as string
    await services.media.processPending()
    return id
  }
  const pair = async (name: string) => {
    const reg = (await call('POST', '/v1/devices/register', {}, null)).body.data
    const screenId = (await call('POST', '/v1/screens/pair', { code: reg.pairingCode, name })).body.data.id as string
    const poll = (await call('GET', `/v1/devices/register/${reg.registrationId}`, undefined, reg.pollSecret)).body.data
    await services.desiredPublisher.idle()
    const dev = await connectDevice(t, `mqtt://127.0.0.1:${running.mqttPort}`, { screenId, deviceSecret: poll.deviceSecret, mqtt: poll.mqtt })
    await dev.next(() => true)
    return { screenId, dev }
  }
  return { running, services, clock, base, call, upload, pair }
}

t.test('assign → signed media URL in the desired state; recall pulls it; restore puts it back', async (t) => {
  const c = await start(t)
  const img = await c.upload('poster.png', PNG_1x1)
  const { screenId, dev } = await c.pair('Lobby')

  const res = await c.call('POST', `/v1/screens/${screenId}/assign`, { contentKind: 'media', contentId: img })
  t.equal(res.status, 200)
  const withIt = await dev.next((s) => s.assignment?.contentId === img)
  t.equal(withIt.version, res.body.data.desiredVersion, 'the answer names the version the device got')
  const content = withIt.assignment!.content!
  t.match(content, {
    name: 'poster.png',
    mimeType: 'image/png',
    sizeBytes: PNG_1x1.length,
    url: new RegExp(`^/v1/media/${img}/content\\?exp=(\\d+)&sig=[0-9a-f]{64}$`),
  })
  const exp = Number(/exp=(\d+)/.exec(content.url!)![1])
  t.ok(exp * 1000 >= c.clock.now().getTime() + 7 * 86_400_000, 'valid for at least 7 days')
  t.equal(exp % 86_400, 0, 'rounded to a UTC midnight, so same-day rebuilds carry the same URL')

  // the device downloads with the signed URL alone (no bearer); Range still works
  const dl = await fetch(c.base + content.url!)
  t.equal(dl.status, 200)
  t.same(Buffer.from(await dl.arrayBuffer()), PNG_1x1, 'the bytes')
  t.equal(dl.headers.get('etag'), `"${content.sha256}"`)
  const part = await fetch(c.base + content.url!, { headers: { range: 'bytes=0-7' } })
  t.equal(part.status, 206)
  t.equal(part.headers.get('content-range'), `bytes 0-7/${PNG_1x1.length}`)
  t.same(Buffer.from(await part.arrayBuffer()), PNG_1x1.subarray(0, 8))

  // tampered, for another item, expired, or no credential at all: refused
  const sig = /sig=([0-9a-f]+)/.exec(content.url!)![1]!
  const flipped = sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0')
  const other = await c.upload('other.gif', GIF_3x2)
  const refused: [string, string][] = [
    [content.url!.replace(sig, flipped), 'not valid'],
    [content.url!.replace(`exp=${exp}`, `exp=${exp + 86_400}`), 'not valid'],
    [content.url!.replace(img, other), 'not valid'],
    [content.url!.replace(sig, 'zz'), 'not valid'],
    [await c.services.mediaUrls.url(img, Math.floor(c.clock.now().getTime() / 1000) - 1), 'expired'],
  ]
  for (const [url, why] of refused) {
    const r = await fetch(c.base + url)
    t.equal(r.status, 401, url)
    t.match(await r.json(), { error: 'invalid_credentials', message: new RegExp(why) })
  }
  t.equal((await fetch(`${c.base}/v1/media/${img}/content`)).status, 401, 'without a signature the bearer is still required')
  t.equal(((await (await fetch(`${c.base}/v1/media/${img}/content`)).json()) as any).error, 'missing_credentials')

  // recall: the device gets a new state without the content; the URL stops working too
  t.equal((await c.call('POST', `/v1/media/${img}/recall`, { reason: 'Wrong price' })).status, 200)
  const recalled = await dev.next((s) => s.version > withIt.version)
  t.equal(recalled.assignment, null, 'the recalled file is gone from the screen')
  t.notOk(JSON.stringify(recalled).includes(img))
  t.equal((await fetch(c.base + content.url!)).status, 404, 'a recalled file is not served to devices')

  // restore: back, with a working URL
  t.equal((await c.call('POST', `/v1/media/${img}/restore`)).status, 200)
  const restored = await dev.next((s) => s.version > recalled.version)
  t.match(restored.assignment, { contentKind: 'media', contentId: img, content: { url: /sig=/ } })
  t.equal((await fetch(c.base + restored.assignment!.content!.url!)).status, 200)

  // the clock passes the expiry: the old URL is refused, and the refresh worker republishes
  c.clock.advance(9 * 86_400_000)
  t.equal((await fetch(c.base + restored.assignment!.content!.url!)).status, 401, 'expired')
  const refresher = c.running.app.workers.mediaUrlRefresh
  await refresher.runOnce()
  const fresh = await dev.next((s) => s.version > restored.version)
  t.not(fresh.assignment!.content!.url, restored.assignment!.content!.url, 'a new URL')
  t.equal((await fetch(c.base + fresh.assignment!.content!.url!)).status, 200, 'the refreshed URL works')
  await refresher.runOnce()
  await c.services.desiredPublisher.idle()
  t.equal(dev.latest!.version, fresh.version, 'a freshly published screen is not republished again')
})

t.test('a playlist containing the media: recall of the media drops it from the description', async (t) => {
  const c = await start(t)
  const a = await c.upload('a.png', PNG_1x1)
  const b = await c.upload('b.gif', GIF_3x2)
  const pl = (
    await c.call('POST', '/v1/playlists', {
      name: 'Loop',
      items: [
        { kind: 'media', id: a, durationMs: 5000 },
        { kind: 'media', id: b },
      ],
    })
  ).body.data
  const one = await c.pair('One')
  const two = await c.pair('Two')
  const bulk = await c.call('POST', '/v1/screens/bulk-assign', { screenIds: [one.screenId, two.screenId], contentKind: 'playlist', contentId: pl.id })
  t.match(bulk.body.data, { assigned: 2 })
  const s1 = await one.dev.next((s) => s.assignment?.contentId === pl.id)
  await two.dev.next((s) => s.assignment?.contentId === pl.id)
  t.match(s1.assignment!.content!.items, [
    { contentKind: 'media', contentId: a, durationMs: 5000, mimeType: 'image/png', url: /sig=/ },
    { contentKind: 'media', contentId: b, durationMs: 10_000, mimeType: 'image/gif', url: /sig=/ },
  ])
  for (const item of s1.assignment!.content!.items!) t.equal((await fetch(c.base + item.url!)).status, 200, `${item.contentId} downloads`)

  await c.call('POST', `/v1/media/${b}/recall`, {})
  let seen = 0
  for (const d of [one.dev, two.dev]) {
    const after = await d.next((s) => s.version > s1.version && s.assignment?.content?.items?.length === 1)
    t.same(
      after.assignment!.content!.items!.map((i) => i.contentId),
      [a],
      'the playlist keeps playing without the recalled file',
    )
    if (d === one.dev) seen = after.version
  }
  await c.call('POST', `/v1/media/${b}/restore`)
  const back = await one.dev.next((s) => s.version > seen && s.assignment?.content?.items?.length === 2)
  t.same(
    back.assignment!.content!.items!.map((i) => i.contentId),
    [a, b],
  )

  // recalling the playlist itself: nothing plays
  await c.call('POST', `/v1/playlists/${pl.id}/recall`, {})
  const none = await one.dev.next((s) => s.version > back.version)
  t.equal(none.assignment, null)
})
