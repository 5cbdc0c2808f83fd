// Screenshot jobs through a real cloud and a real MQTT device: the job waits for the screen,
// reaches it on its jobs topic with an upload URL, the device's PNG upload (device
// credential, size-capped, sniffed) closes it; bad uploads answer the error envelope and
// change nothing; a failed result, silence past the TTL, tenancy, and retention.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import fs from 'node:fs'
import { createHash } from 'node:crypto'
import sharp from 'sharp'
import { encodeMessage, parseJob, topics, type Job } from '@svc/shared/mqtt/index'
import { connectDevice, startCloud, type Cloud } from '../devicelink/link.js'
import { png } from '../content/fixtures.js'
import { SCREENSHOT_MAX_BYTES, SCREENSHOT_TTL_MS } from '../../src/domains/screenshots/ScreenshotService.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

/** `bytes` with the byte at `at` flipped. */
function corrupt(bytes: Buffer, at: number): Buffer {
  const out = Buffer.from(bytes)
  out[at] = out[at]! ^ 0xff
  return out
}

async function upload(cloud: Cloud, url: string, body: Buffer, auth: string | null, type = 'image/png') {
  const at = new URL(url, 'http://x')
  const res = await fetch(`http://127.0.0.1:${cloud.running.httpPort}${at.pathname}${at.search}`, {
    method: 'PUT',
    headers: { 'content-type': type, ...(auth ? { authorization: auth } : {}) },
    body,
  })
  return { status: res.status, body: (await res.json()) as any }
}
const basic = (user: string, secret: string) => `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`

t.test('a screenshot job reaches the screen when it connects; its upload closes the job', async (t) => {
  const cloud = await startCloud(t)
  const a = await cloud.pair('A')
  const b = await cloud.pair('B')

  const asked = await cloud.call('POST', `/v1/screens/${a.screenId}/screenshot`)
  t.equal(asked.status, 202)
  const shot = asked.body.data
  t.match(shot, { id: /^shot_/, screenId: a.screenId, status: 'queued', imageUrl: null, reason: null })
  t.equal((await cloud.call('GET', `/v1/screenshots/${shot.id}/image`)).status, 409, 'no image before it is done')
  t.equal((await cloud.call('GET', `/v1/screenshots/${shot.id}/thumbnail`)).status, 409, 'no thumbnail before it is done')
  t.equal((await cloud.call('POST', '/v1/screens/scr_nope/screenshot')).status, 404)

  // The device connects: the job arrives with an upload URL, and is `sent` once acknowledged.
  const url = `mqtt://127.0.0.1:${cloud.running.mqttPort}`
  const jobs: Job[] = []
  const dev = await connectDevice(t, url, a, {}, false)
  dev.client.on('message', (topic, payload) => {
    if (topic !== topics.jobs(a.screenId)) return
    const r = parseJob(payload)
    if (r.ok) jobs.push(r.value)
  })
  await dev.client.subscribeAsync(topics.jobs(a.screenId), { qos: 1 })
  const deadline = Date.now() + HANG_GUARD_MS // a hang guard
  while (!jobs.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  t.match(jobs[0], { id: shot.id, kind: 'screenshot', uploadUrl: `/v1/devices/screenshots/${shot.id}` }, 'the job, with where to upload')
  while ((await cloud.call('GET', `/v1/screenshots/${shot.id}`)).body.data.status !== 'sent' && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20))
  t.equal((await cloud.call('GET', `/v1/screenshots/${shot.id}`)).body.data.status, 'sent')

  // Bad uploads: the envelope, and the job stays open.
  const up = jobs[0]!.kind === 'screenshot' ? jobs[0]!.uploadUrl! : ''
  const image = png(640, 360)
  let r = await upload(cloud, up, image, null)
  t.match(r, { status: 401, body: { error: 'missing_credentials' } }, 'no credential')
  r = await upload(cloud, up, image, basic(a.screenId, 'wrong'))
  t.match(r, { status: 401, body: { error: 'invalid_credentials' } }, 'wrong secret')
  r = await upload(cloud, up, image, basic(b.screenId, b.deviceSecret))
  t.match(r, { status: 401, body: { error: 'invalid_credentials' } }, "another screen's credential")
  r = await upload(cloud, up, image, `Bearer ${cloud.apiKey}`)
  t.match(r, { status: 401, body: { error: 'missing_credentials' } }, 'an API key is not a device credential')
  r = await upload(cloud, up, Buffer.from('GIF89a not a png at all, not at all'), basic(a.screenId, a.deviceSecret))
  t.match(r, { status: 415, body: { error: 'unsupported_type' } }, 'not a PNG by its bytes')
  // Only a whole PNG: its chunks are walked to IEND, CRCs checked, nothing after it.
  const html = Buffer.from('<html><script>alert(document.cookie)</script></html>')
  const header = image.subarray(0, 33) // signature + IHDR
  for (const [label, bytes, reason] of [
    ['a PNG header with HTML after it', Buffer.concat([header, html]), /malformed chunk|runs past|IEND/],
    ['a whole PNG with HTML after its IEND', Buffer.concat([image, html]), /after the PNG's IEND/],
    ['a PNG cut short', image.subarray(0, image.length - 12), /before its IEND/],
    ['a PNG with a corrupted chunk', corrupt(image, 50), /IDAT chunk fails its CRC/],
    ['a 0×1 PNG', png(0, 1), /outside 1 to/],
  ] as const) {
    r = await upload(cloud, up, bytes, basic(a.screenId, a.deviceSecret))
    t.match(r, { status: 415, body: { error: 'unsupported_type', message: reason } }, label)
  }
  r = await upload(cloud, up, image, basic(a.screenId, a.deviceSecret), 'image/jpeg')
  t.match(r, { status: 415, body: { error: expectString() } }, 'another content type')
  r = await upload(cloud, up, Buffer.concat([image, Buffer.alloc(SCREENSHOT_MAX_BYTES)]), basic(a.screenId, a.deviceSecret))
  t.match(r, { status: 413, body: { error: 'too_large' } }, `over ${SCREENSHOT_MAX_BYTES} bytes`)
  r = await upload(cloud, '/v1/devices/screenshots/shot_nope', image, basic(a.screenId, a.deviceSecret))
  t.match(r, { status: 401, body: { error: 'invalid_credentials' } }, 'an unknown job: no hint whether it exists')
  t.equal((await cloud.call('GET', `/v1/screenshots/${shot.id}`)).body.data.status, 'sent', 'still open')
  t.equal(fs.readdirSync(`${servicesOf(cloud.running.app).config.dataDir}/media/tmp`).length, 0, 'no staged file left behind')

  // The screen list (its pages kept until a change makes them stale) shows the newest screenshot once it is in.
  const listedShot = async () =>
    ((await cloud.call('GET', '/v1/screens')).body.data as { id: string; lastScreenshot: { id: string } | null }[]).find((s) => s.id === a.screenId)
      ?.lastScreenshot ?? null
  t.equal(await listedShot(), null, 'no screenshot in the list before the upload')
  r = await upload(cloud, up, image, basic(a.screenId, a.deviceSecret))
  t.equal(r.status, 200)
  t.match(await listedShot(), { id: shot.id }, 'the list shows it at once after the upload, not when its kept page runs out')
  t.match(r.body.data, {
    status: 'ok',
    width: 640,
    height: 360,
    sizeBytes: image.length,
    mimeType: 'image/png',
    imageUrl: `/v1/screenshots/${shot.id}/image`,
    source: 'page',
  })
  t.equal((await cloud.call('GET', `/v1/screenshots/${shot.id}`)).body.data.source, 'page', 'an upload naming no source rendered the page')
  const got = await fetch(`http://127.0.0.1:${cloud.running.httpPort}${r.body.data.imageUrl}`, { headers: { authorization: `Bearer ${cloud.apiKey}` } })
  t.equal(got.status, 200)
  t.equal(got.headers.get('content-type'), 'image/png')
  t.equal(got.headers.get('x-content-type-options'), 'nosniff', 'never sniffed past its type')
  t.same(Buffer.from(await got.arrayBuffer()), image, 'the stored bytes')
  // Its thumbnail: a small WebP (what the screens table and grid show), made after the upload
  // answered, or on the first GET where it is missing (screenshots from before thumbnails).
  t.equal(r.body.data.thumbnailUrl, `/v1/screenshots/${shot.id}/thumbnail`)
  const thumbnail = async (key = cloud.apiKey) => {
    const res = await fetch(`http://127.0.0.1:${cloud.running.httpPort}/v1/screenshots/${shot.id}/thumbnail`, { headers: { authorization: `Bearer ${key}` } })
    return { status: res.status, type: res.headers.get('content-type'), cache: res.headers.get('cache-control'), bytes: Buffer.from(await res.arrayBuffer()) }
  }
  const thumb = await thumbnail()
  t.match(thumb, { status: 200, type: 'image/webp', cache: /max-age=\d+/ })
  t.match(await sharp(thumb.bytes).metadata(), { format: 'webp', width: 320, height: 180 }, 'at most 320 px on its longer side')
  const services = servicesOf(cloud.running.app)
  await services.screenshots.idle()
  const thumbFile = services.mediaStore.thumbPath(createHash('sha256').update(image).digest('hex'))
  t.ok(fs.existsSync(thumbFile), 'kept in the media store beside the PNG')
  fs.rmSync(thumbFile)
  const again = await thumbnail()
  t.equal(again.status, 200, 'a missing thumbnail is made on its first GET')
  t.same(again.bytes, thumb.bytes)
  t.ok(fs.existsSync(thumbFile), 'and kept')
  r = await upload(cloud, up, png(10, 10), basic(a.screenId, a.deviceSecret))
  t.match(r, { status: 409, body: { error: 'conflict' } }, 'a second upload is refused')
  // The agent's `ok` result after its upload changes nothing.
  await dev.client.publishAsync(
    topics.jobResults(a.screenId),
    encodeMessage({ jobId: shot.id, kind: 'screenshot', sentHex: '', replyHex: '', outcome: 'ok', at: new Date().toISOString() }),
    { qos: 1 },
  )

  // Another workspace sees nothing.
  const other = await servicesOf(cloud.running.app).workspaces.create('Other', 'us')
  const otherKey = (await servicesOf(cloud.running.app).apiKeys.createRoot(other.id, other.region, 'Owner', 'all')).secret
  t.equal((await cloud.call('GET', `/v1/screenshots/${shot.id}`, undefined, otherKey)).status, 404)
  t.equal((await cloud.call('GET', `/v1/screenshots/${shot.id}/image`, undefined, otherKey)).status, 404)
  t.equal((await thumbnail(otherKey)).status, 404, "another workspace's thumbnail: 404")
  t.equal((await cloud.call('POST', `/v1/screens/${a.screenId}/screenshot`, undefined, otherKey)).status, 404)

  // A job the agent could not do fails with its reason.
  // Counted before asking: the job may reach the device before the answer does.
  const sentBefore = jobs.length
  const second = (await cloud.call('POST', `/v1/screens/${a.screenId}/screenshot`)).body.data
  for (const again = Date.now() + HANG_GUARD_MS; !jobs.some((j) => j.id === second.id) && Date.now() < again; ) await new Promise((r) => setTimeout(r, 20))
  t.same(
    jobs.slice(sentBefore).map((j) => j.id),
    [second.id],
    'a job asked while connected goes out at once, alone',
  )
  await dev.client.publishAsync(
    topics.jobResults(a.screenId),
    encodeMessage({
      jobId: second.id,
      kind: 'screenshot',
      sentHex: '',
      replyHex: '',
      outcome: 'failed',
      reason: 'no browser here',
      at: new Date().toISOString(),
    }),
    { qos: 1 },
  )
  let failed = (await cloud.call('GET', `/v1/screenshots/${second.id}`)).body.data
  for (const guardEnd = Date.now() + HANG_GUARD_MS; failed.status !== 'failed' && Date.now() < guardEnd; ) {
    await new Promise((r) => setTimeout(r, 20))
    failed = (await cloud.call('GET', `/v1/screenshots/${second.id}`)).body.data
  }
  t.match(failed, { status: 'failed', reason: 'no browser here', imageUrl: null })
  t.match((await upload(cloud, `/v1/devices/screenshots/${second.id}`, image, basic(a.screenId, a.deviceSecret))).status, 409, 'closed')

  // Silence: a job without an answer fails as expired after the TTL.
  await dev.client.endAsync(true)
  const silent = (await cloud.call('POST', `/v1/screens/${a.screenId}/screenshot`)).body.data
  cloud.clock.advance(SCREENSHOT_TTL_MS + 1000)
  t.match((await cloud.call('GET', `/v1/screenshots/${silent.id}`)).body.data, { status: 'failed', reason: 'expired' })

  // Retention: the housekeeper deletes month-old screenshots and their files.
  cloud.clock.advance(31 * 86_400_000)
  t.match(await listedShot(), { id: shot.id }, 'listed until retention deletes it')
  await cloud.running.app.workers.housekeeper.runOnce()
  t.equal(await listedShot(), null, 'and no longer listed once deleted')
  t.equal((await cloud.call('GET', `/v1/screenshots/${shot.id}`)).status, 404, 'gone after 30 days')
  const left = fs
    .readdirSync(`${servicesOf(cloud.running.app).config.dataDir}/media`, { recursive: true })
    .map(String)
    .filter((f) => /^[0-9a-f]{2}\/[0-9a-f]{64}$/.test(f))
  t.same(left, [], 'and its file')
  t.notOk(fs.existsSync(thumbFile), 'and its thumbnail')
})

t.test('an upload says what it shows: the display (the compositor) or the page', async (t) => {
  const cloud = await startCloud(t)
  const a = await cloud.pair('A')
  const auth = basic(a.screenId, a.deviceSecret)
  const ask = async () => (await cloud.call('POST', `/v1/screens/${a.screenId}/screenshot`)).body.data as { id: string; source: unknown }
  const shot = await ask()
  t.equal(shot.source, null, 'no source before the image')
  const image = png(320, 180)
  let r = await upload(cloud, `/v1/devices/screenshots/${shot.id}?source=glass`, image, auth)
  t.match(r, { status: 422, body: { error: 'validation_error', message: /source/ } }, 'a source that is not display or page')
  t.equal((await cloud.call('GET', `/v1/screenshots/${shot.id}`)).body.data.status, 'queued', 'the job stays open')
  r = await upload(cloud, `/v1/devices/screenshots/${shot.id}?source=display`, image, auth)
  t.match(r, { status: 200, body: { data: { status: 'ok', source: 'display' } } })
  t.equal((await cloud.call('GET', `/v1/screenshots/${shot.id}`)).body.data.source, 'display', 'stored and served')
  const page = await ask()
  r = await upload(cloud, `/v1/devices/screenshots/${page.id}?source=page`, image, auth)
  t.match(r, { status: 200, body: { data: { status: 'ok', source: 'page' } } })
})

function expectString() {
  return String
}
