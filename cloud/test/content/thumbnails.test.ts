// Names and pictures in the media library: the background probe makes a thumbnail of an
// image (sharp) and of a video (a frame through ffmpeg), and reads a video's width, height
// and duration (ffprobe); the API answers `thumbnailUrl` and the picture behind it, to
// the workspace that owns the file only. Files are made on the spot (sharp, ffmpeg).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import sharp from 'sharp'
import { ffmpeg, HANG_GUARD_MS, toolTest } from '@svc/shared/testing'
import { buildMedia } from './fixtures.js'

const picture = async (h: Awaited<ReturnType<typeof buildMedia>>, url: string, token: string) => {
  const res = await h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })
  return { res, meta: res.statusCode === 200 ? await sharp(res.rawPayload).metadata() : null }
}

t.test('an image gets a thumbnail at upload, shown only to its workspace; other kinds get none', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const big = await sharp({ create: { width: 3840, height: 2160, channels: 3, background: '#c03020' } })
    .jpeg()
    .toBuffer()
  const item = await h.ready(apiKey, 'poster.jpg', big)
  t.match(item, { state: 'ready', width: 3840, height: 2160, thumbnailUrl: `/v1/media/${item.id}/thumbnail` })
  const { res, meta } = await picture(h, item.thumbnailUrl, apiKey)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'image/webp')
  t.match(meta, { format: 'webp', width: 320, height: 180 }, 'a 4K image is shrunk to 320 px wide, its proportions kept')
  const stored = path.join(h.dataDir, 'media', 'thumbs', item.sha256.slice(0, 2), `${item.sha256}.webp`)
  t.ok(fs.existsSync(stored), 'kept in the media store by the bytes hash')

  // Another workspace: 404, as for the item itself.
  const other = await h.workspace()
  t.equal((await picture(h, item.thumbnailUrl, other.apiKey)).res.statusCode, 404, "another workspace's file: 404")

  // A small image is not enlarged; a PDF has no thumbnail (404 with the envelope).
  const small = await h.ready(
    apiKey,
    'dot.png',
    await sharp({ create: { width: 40, height: 20, channels: 4, background: '#00ff00' } })
      .png()
      .toBuffer(),
  )
  t.match((await picture(h, small.thumbnailUrl, apiKey)).meta, { width: 40, height: 20 })
  const pdf = await h.ready(apiKey, 'menu.pdf', Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n'))
  t.equal(pdf.thumbnailUrl, null)
  const none = await h.req('GET', `/v1/media/${pdf.id}/thumbnail`, apiKey)
  t.equal(none.statusCode, 404)
  t.match(none.json(), { error: 'not_found', message: /no thumbnail/ })

  // Deleting the last owner of the bytes removes the thumbnail with them.
  t.equal((await h.req('DELETE', `/v1/media/${item.id}`, apiKey)).statusCode, 200)
  t.notOk(fs.existsSync(stored), 'the thumbnail went with the bytes')
})

toolTest(t, ffmpeg, "a video gets its width, height and duration and a frame as thumbnail, off the upload's request", async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const file = path.join(h.dataDir, 'clip.mp4')
  execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=1280x720:rate=10', '-t', '6', '-pix_fmt', 'yuv420p', file], {
    timeout: HANG_GUARD_MS,
  })
  const res = await h.upload(apiKey, { name: 'clip', file: { filename: 'clip.mp4', data: fs.readFileSync(file) } })
  t.equal(res.statusCode, 201)
  t.match(res.json().data, { state: 'processing', width: null, thumbnailUrl: null }, 'the upload answers before the video is probed')
  const video = await h.ready(apiKey, 'clip.mp4', fs.readFileSync(file))
  t.match(video, { kind: 'video', state: 'ready', width: 1280, height: 720, durationMs: 6000, thumbnailUrl: `/v1/media/${video.id}/thumbnail` })
  t.match((await picture(h, video.thumbnailUrl, apiKey)).meta, { format: 'webp', width: 320, height: 180 }, 'a frame of the video, 320 px wide')
})
