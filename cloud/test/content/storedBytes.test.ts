// Media and screenshots share one content-addressed store: deleting one owner of some
// bytes never removes them while another owner (a screenshot, a media item of another
// workspace) holds them, whichever is deleted first; and a stored file missing from disk
// answers the 404 envelope, never a 500, for media downloads and screenshot images.
import { servicesOf } from '../../src/app.js'
import fs from 'node:fs'
import t from 'tap'
import { buildMedia, PNG_1x1, type MediaHarness } from './fixtures.js'
import { pairScreen } from '../screenHelpers.js'
import { SCREENSHOT_RETENTION_DAYS } from '../../src/domains/screenshots/ScreenshotService.js'

const basic = (user: string, secret: string) => `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`

/** A screenshot of a freshly paired screen whose PNG is `png`, uploaded the way the agent does. */
async function screenshot(h: MediaHarness, apiKey: string, png: Buffer): Promise<string> {
  const screen = await pairScreen(h, apiKey, 'Lobby')
  const asked = await h.req('POST', `/v1/screens/${screen.screenId}/screenshot`, apiKey)
  if (asked.statusCode !== 202) throw new Error(asked.body)
  const id = asked.json().data.id as string
  const up = await h.app.inject({
    method: 'PUT',
    url: `/v1/devices/screenshots/${id}`,
    headers: { 'content-type': 'image/png', authorization: basic(screen.screenId, screen.deviceSecret) },
    payload: png,
  })
  if (up.statusCode !== 200) throw new Error(`${up.statusCode} ${up.body}`)
  return id
}

t.test("deleting media keeps bytes a screenshot holds, in any workspace; purging screenshots keeps a media item's", async (t) => {
  const h = await buildMedia(t)
  const { apiKey: shots } = await h.workspace('Screens')
  const { apiKey: library } = await h.workspace('Library')
  const shotId = await screenshot(h, shots, PNG_1x1)
  const image = () => h.req('GET', `/v1/screenshots/${shotId}/image`, shots)
  t.same((await image()).rawPayload, PNG_1x1)

  // The same bytes as a media item of another workspace, deleted.
  const media = await h.ready(library, 'same.png', PNG_1x1)
  t.equal((await h.req('DELETE', `/v1/media/${media.id}`, library)).statusCode, 200)
  const after = await image()
  t.equal(after.statusCode, 200, after.body)
  t.same(after.rawPayload, PNG_1x1, "the screenshot's image survives the media delete")

  // The other way round: the screenshot goes (retention), a media item holding the bytes keeps them.
  const kept = await h.ready(library, 'kept.png', PNG_1x1)
  h.clock.advance((SCREENSHOT_RETENTION_DAYS + 1) * 86_400_000)
  t.equal(await servicesOf(h.app).screenshots.purgeOld(), 1)
  t.equal((await image()).statusCode, 404, 'the screenshot is gone')
  const download = await h.req('GET', `/v1/media/${kept.id}/content`, library)
  t.equal(download.statusCode, 200)
  t.same(download.rawPayload, PNG_1x1)

  // The last owner gone, the bytes go.
  const file = servicesOf(h.app).media.store.pathOf(kept.sha256)
  t.ok(fs.existsSync(file))
  t.equal((await h.req('DELETE', `/v1/media/${kept.id}`, library)).statusCode, 200)
  t.notOk(fs.existsSync(file), 'no owner left: the file is removed')
})

t.test('a stored file missing from disk answers 404 not_found, for media and screenshots', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const media = await h.ready(apiKey, 'a.png', PNG_1x1)
  const shotId = await screenshot(h, apiKey, PNG_1x1)
  fs.rmSync(servicesOf(h.app).media.store.pathOf(media.sha256))

  for (const [what, headers] of [
    ['whole file', {}],
    ['a range', { range: 'bytes=0-9' }],
  ] as const) {
    const res = await h.req('GET', `/v1/media/${media.id}/content`, apiKey, undefined, headers)
    t.equal(res.statusCode, 404, `media download, ${what}`)
    t.match(res.headers['content-type'], /^application\/json/)
    t.same(Object.keys(res.json()).sort(), ['error', 'message'])
    t.equal(res.json().error, 'not_found')
    t.notOk(res.headers['cache-control'], 'no caching headers of the file on the error')
  }
  const signed = await servicesOf(h.app).mediaUrls.url(media.id)
  const device = await h.req('GET', signed, null)
  t.equal(device.statusCode, 404, 'a device with a signed URL')
  t.equal(device.json().error, 'not_found')

  const image = await h.req('GET', `/v1/screenshots/${shotId}/image`, apiKey)
  t.equal(image.statusCode, 404, 'screenshot image')
  t.match(image.headers['content-type'], /^application\/json/)
  t.equal(image.json().error, 'not_found')
  t.match(image.json().message, /missing/)
})
