import { servicesOf } from '../../src/app.js'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { makeKey } from '../helpers.js'
import { buildMedia, GIF_3x2, mp4, png, PNG_1x1, SVG, zip } from './fixtures.js'

t.test('upload: sniffed type, processing → ready with dimensions, content-addressed storage', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  // the client claims SVG; the bytes are a PNG, and the bytes win
  const res = await h.upload(apiKey, { name: 'Logo', file: { filename: 'logo.svg', data: PNG_1x1, type: 'image/svg+xml' } })
  t.equal(res.statusCode, 201)
  const item = res.json().data
  t.match(item, {
    name: 'Logo',
    kind: 'image',
    mimeType: 'image/png',
    sizeBytes: PNG_1x1.length,
    state: 'processing',
    width: null,
    folderId: null,
    nodeId: null,
    recalledAt: null,
  })
  t.match(item.id, /^med_/)
  t.equal(item.sha256.length, 64)
  const stored = path.join(h.dataDir, 'media', item.sha256.slice(0, 2), item.sha256)
  t.same(fs.readFileSync(stored), PNG_1x1, 'stored under <dataDir>/media/<prefix>/<sha256>')
  t.same(fs.readdirSync(path.join(h.dataDir, 'media', 'tmp')), [], 'no temp file left')

  t.equal(await servicesOf(h.app).media.processPending(), 1)
  const ready = (await h.req('GET', `/v1/media/${item.id}`, apiKey)).json().data
  t.match(ready, { state: 'ready', width: 1, height: 1, durationMs: null })

  const gif = await h.ready(apiKey, 'anim.gif', GIF_3x2)
  t.match(gif, { kind: 'image', mimeType: 'image/gif', width: 3, height: 2 })
  const video = await h.ready(apiKey, 'clip.mp4', mp4(12_345))
  t.match(video, { kind: 'video', mimeType: 'video/mp4', state: 'ready', durationMs: 12_345 })
  const html = await h.ready(apiKey, 'menu.zip', zip({ 'index.html': '<h1>Menu</h1>', 'style.css': 'h1{}' }))
  t.match(html, { kind: 'html', mimeType: 'application/zip', state: 'ready' })

  // identical bytes under another name are stored once
  const again = (await h.upload(apiKey, { file: { filename: 'copy.png', data: PNG_1x1 } })).json().data
  t.equal(again.sha256, item.sha256)
  t.equal(again.name, 'copy.png', 'name defaults to the file name')
  t.equal(fs.readdirSync(path.join(h.dataDir, 'media', item.sha256.slice(0, 2))).filter((f) => f === item.sha256).length, 1)

  // a truncated image is stored but fails processing, with a reason (a JPEG: a PNG is read whole at upload)
  const broken = Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex')
  const bad = (await h.upload(apiKey, { file: { filename: 'broken.jpg', data: broken } })).json().data
  await servicesOf(h.app).media.processPending()
  const failed = (await h.req('GET', `/v1/media/${bad.id}`, apiKey)).json().data
  t.equal(failed.state, 'failed')
  t.match(failed.failureReason, /header/)
})

t.test('a PNG is read through to its IEND: a PNG header with HTML after it, trailing bytes, a bad CRC or a cut are refused', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const html = Buffer.from('<html><body><script>alert(document.domain)</script></body></html>')
  const idat = PNG_1x1.indexOf('IDAT') + 4
  const flipped = Buffer.from(PNG_1x1)
  flipped[idat] = flipped[idat]! ^ 0xff
  for (const [label, data, reason] of [
    ['a PNG header, then HTML', Buffer.concat([PNG_1x1.subarray(0, 33), html]), /malformed chunk|runs past/],
    ['a whole PNG, then HTML', Buffer.concat([PNG_1x1, html]), /after the PNG's IEND chunk/],
    ['a PNG with a corrupted IDAT', flipped, /IDAT chunk fails its CRC/],
    ['a PNG cut before IEND', PNG_1x1.subarray(0, PNG_1x1.length - 12), /before its IEND/],
    ['a PNG header only', PNG_1x1.subarray(0, 24), /ends before its IEND|runs past/],
  ] as const) {
    const res = await h.upload(apiKey, { name: 'x', file: { filename: 'x.png', data, type: 'image/png' } })
    t.equal(res.statusCode, 415, label)
    t.match(res.json(), { error: 'unsupported_type', message: reason }, label)
  }
  t.equal((await servicesOf(h.app).db.get<{ n: number }>('SELECT COUNT(*) AS n FROM media'))!.n, 0, 'nothing stored')
  // A whole PNG is stored, and served as its type with nosniff.
  const good = await h.ready(apiKey, 'ok.png', png(4, 3))
  t.match(good, { mimeType: 'image/png', width: 4, height: 3, state: 'ready' })
  const got = await h.req('GET', `/v1/media/${good.id}/content`, apiKey)
  t.equal(got.headers['content-type'], 'image/png')
  t.equal(got.headers['x-content-type-options'], 'nosniff')
})

t.test('upload refusals: SVG, unknown type, zip without index.html, too large, missing file, wrong content type', async (t) => {
  const h = await buildMedia(t, { mediaUploadMaxBytes: 1024 })
  const { apiKey } = await h.workspace()
  const svg = await h.upload(apiKey, { name: 'x', file: { filename: 'x.svg', data: SVG, type: 'image/svg+xml' } })
  t.equal(svg.statusCode, 415)
  t.equal(svg.json().error, 'unsupported_type')
  const text = await h.upload(apiKey, { file: { filename: 'notes.png', data: Buffer.from('just some text, not an image') } })
  t.equal(text.statusCode, 415)
  const z = await h.upload(apiKey, { file: { filename: 'a.zip', data: zip({ 'readme.txt': 'hi' }) } })
  t.equal(z.statusCode, 415)
  t.match(z.json().message, /index\.html/)
  const big = await h.upload(apiKey, { file: { filename: 'big.mp4', data: Buffer.concat([mp4(1000), Buffer.alloc(2000)]) } })
  t.equal(big.statusCode, 413)
  t.equal(big.json().error, 'too_large')
  const none = await h.upload(apiKey, { name: 'no file' })
  t.equal(none.statusCode, 422)
  t.match(none.json().message, /file is required/)
  const json = await h.req('POST', '/v1/media/upload', apiKey, { name: 'x' })
  t.equal(json.statusCode, 415)
  const folder = await h.upload(apiKey, { folderId: 'fld_nope', file: { filename: 'a.png', data: PNG_1x1 } })
  t.equal(folder.statusCode, 422)
  t.equal(folder.json().error, 'invalid_folder')
  const node = await h.upload(apiKey, { nodeId: 'node_nope', file: { filename: 'a.png', data: PNG_1x1 } })
  t.equal(node.json().error, 'invalid_node')
  // nothing refused was kept
  t.equal((await h.req('GET', '/v1/media', apiKey)).json().data.length, 0)
  const shaDirs = fs.readdirSync(path.join(h.dataDir, 'media')).filter((d) => d !== 'tmp')
  t.same(shaDirs, [], 'no stored bytes')
  t.same(fs.readdirSync(path.join(h.dataDir, 'media', 'tmp')), [], 'no temp files')
})

t.test('upload is idempotent with Idempotency-Key and rate limited per key at 300/min', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const first = await h.upload(apiKey, { file: { filename: 'a.png', data: PNG_1x1 } }, { 'idempotency-key': 'up-1' })
  const second = await h.upload(apiKey, { file: { filename: 'a.png', data: PNG_1x1 } }, { 'idempotency-key': 'up-1' })
  t.equal(first.statusCode, 201)
  t.equal(second.statusCode, 201)
  t.equal(second.headers['idempotent-replayed'], 'true')
  t.equal(second.json().data.id, first.json().data.id)
  t.equal((await h.req('GET', '/v1/media?count=1', apiKey)).json().total, 1)
  const route = h.app.routeCatalog.find((r) => r.url === '/v1/media/upload')
  t.equal(route?.permission, 'media.create')
})

t.test('list: newest first, filters, paging per SPEC, count', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const folder = (await h.req('POST', '/v1/media-folders', apiKey, { name: 'Posters' })).json().data
  const ids: string[] = []
  for (let i = 0; i < 5; i++) {
    h.clock.advance(1000)
    ids.push(
      (await h.upload(apiKey, { name: `poster ${i}`, ...(i < 2 ? { folderId: folder.id } : {}), file: { filename: 'p.png', data: PNG_1x1 } })).json().data.id,
    )
  }
  const v = (await h.upload(apiKey, { name: 'Promo video', file: { filename: 'v.mp4', data: mp4(5000) } })).json().data
  await servicesOf(h.app).media.processPending()
  ids.push(v.id)
  const all = (await h.req('GET', '/v1/media', apiKey)).json()
  t.same(
    all.data.map((m: { id: string }) => m.id),
    [...ids].reverse(),
    'whole list, newest first',
  )
  t.equal(all.nextCursor, undefined, 'no paging without limit')
  t.same(
    (await h.req('GET', '/v1/media?kind=video', apiKey)).json().data.map((m: { id: string }) => m.id),
    [v.id],
  )
  t.equal((await h.req('GET', '/v1/media?search=POSTER', apiKey)).json().data.length, 5)
  t.equal((await h.req('GET', `/v1/media?folderId=${folder.id}`, apiKey)).json().data.length, 2)
  t.equal((await h.req('GET', '/v1/media?folderId=root', apiKey)).json().data.length, 4)
  t.equal((await h.req('GET', '/v1/media?state=processing', apiKey)).json().data.length, 0)
  t.equal((await h.req('GET', '/v1/media?kind=svg', apiKey)).statusCode, 422)

  const p1 = (await h.req('GET', '/v1/media?limit=4&count=1', apiKey)).json()
  t.equal(p1.data.length, 4)
  t.equal(p1.total, 6)
  t.type(p1.nextCursor, 'string')
  const p2 = (await h.req('GET', `/v1/media?limit=4&cursor=${p1.nextCursor}`, apiKey)).json()
  t.same(
    p2.data.map((m: { id: string }) => m.id),
    [ids[1], ids[0]],
  )
  t.equal(p2.nextCursor, null)
  t.equal((await h.req('GET', '/v1/media?limit=0', apiKey)).statusCode, 422)
  t.equal((await h.req('GET', '/v1/media?limit=501', apiKey)).statusCode, 422)
  t.equal((await h.req('GET', '/v1/media?limit=500', apiKey)).statusCode, 200)
  // a cursor without limit keeps the default page size (100)
  const c = (await h.req('GET', `/v1/media?cursor=${p1.nextCursor}`, apiKey)).json()
  t.equal(c.data.length, 2)
  t.equal(c.nextCursor, null)
  t.equal((await h.req('GET', '/v1/media?cursor=garbage', apiKey)).statusCode, 422)
})

t.test('patch, download with Range, delete (refused while used)', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  const data = mp4(2000)
  const item = await h.ready(apiKey, 'clip.mp4', data)
  const folder = (await h.req('POST', '/v1/media-folders', apiKey, { name: 'Clips' })).json().data
  const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store' })).json().data
  const patched = await h.req('PATCH', `/v1/media/${item.id}`, apiKey, { name: 'Intro', folderId: folder.id, nodeId: node.id })
  t.match(patched.json().data, { name: 'Intro', folderId: folder.id, nodeId: node.id })
  t.equal((await h.req('PATCH', `/v1/media/${item.id}`, apiKey, { folderId: 'fld_nope' })).json().error, 'invalid_folder')
  t.equal((await h.req('PATCH', `/v1/media/${item.id}`, apiKey, { name: '' })).statusCode, 422)
  t.equal((await h.req('PATCH', `/v1/media/${item.id}`, apiKey, { folderId: null })).json().data.folderId, null)

  const url = `/v1/media/${item.id}/content`
  const whole = await h.req('GET', url, apiKey)
  t.equal(whole.statusCode, 200)
  t.equal(whole.headers['content-type'], 'video/mp4')
  t.equal(whole.headers['accept-ranges'], 'bytes')
  t.same(whole.rawPayload, data)
  const part = await h.req('GET', url, apiKey, undefined, { range: 'bytes=4-11' })
  t.equal(part.statusCode, 206)
  t.equal(part.headers['content-range'], `bytes 4-11/${data.length}`)
  t.same(part.rawPayload, data.subarray(4, 12))
  const suffix = await h.req('GET', url, apiKey, undefined, { range: 'bytes=-10' })
  t.equal(suffix.statusCode, 206)
  t.same(suffix.rawPayload, data.subarray(data.length - 10))
  const open = await h.req('GET', url, apiKey, undefined, { range: `bytes=${data.length - 3}-` })
  t.same(open.rawPayload, data.subarray(data.length - 3))
  const beyond = await h.req('GET', url, apiKey, undefined, { range: `bytes=${data.length}-` })
  t.equal(beyond.statusCode, 416)
  t.equal(beyond.headers['content-range'], `bytes */${data.length}`)
  t.equal(beyond.json().error, 'range_not_satisfiable')
  t.equal((await h.req('GET', url, apiKey, undefined, { range: 'bytes=0-1,4-5' })).statusCode, 200, 'several ranges: the whole file')

  const pl = (await h.req('POST', '/v1/playlists', apiKey, { name: 'Loop', items: [{ kind: 'media', id: item.id }] })).json().data
  const refused = await h.req('DELETE', `/v1/media/${item.id}`, apiKey)
  t.equal(refused.statusCode, 409)
  t.equal(refused.json().error, 'conflict')
  t.match(refused.json().message, pl.id)
  await h.req('PATCH', `/v1/playlists/${pl.id}`, apiKey, { items: [] })
  const del = await h.req('DELETE', `/v1/media/${item.id}`, apiKey)
  t.same(del.json().data, { id: item.id, deleted: true })
  t.equal((await h.req('GET', `/v1/media/${item.id}`, apiKey)).statusCode, 404)
  t.notOk(fs.existsSync(path.join(h.dataDir, 'media', item.sha256.slice(0, 2), item.sha256)), 'bytes removed with the last item holding them')
  t.equal((await h.req('DELETE', '/v1/media/med_nope', apiKey)).statusCode, 404)

  // a key without media.delete cannot delete
  const viewer = await makeKey(h, apiKey, ['media.view'])
  t.equal((await h.req('DELETE', `/v1/media/med_x`, viewer.secret)).statusCode, 403)
})

t.test('multipart upload: parts, resume by re-sending, list parts, complete, abort', async (t) => {
  const h = await buildMedia(t, { mediaPartMaxBytes: 100 })
  const { apiKey } = await h.workspace()
  const file = mp4(7_500)
  t.ok(file.length > 200 && file.length <= 300)
  const init = await h.req('POST', '/v1/media/upload/multipart/initiate', apiKey, { name: 'Big video' })
  t.equal(init.statusCode, 201)
  const up = init.json().data
  t.match(up.id, /^mup_/)
  t.equal(up.partSizeMaxBytes, 100)
  const put = (n: number, data: Buffer, type = 'application/octet-stream') =>
    h.app.inject({
      method: 'PUT',
      url: `/v1/media/upload/multipart/${up.id}/parts/${n}`,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': type },
      payload: data,
    })
  t.equal((await put(1, file.subarray(0, 100))).statusCode, 200)
  // part 2 arrives corrupted (connection broke); resending replaces it
  t.equal((await put(2, Buffer.alloc(40))).statusCode, 200)
  t.equal((await put(3, file.subarray(200))).statusCode, 200)
  const listed = (await h.req('GET', `/v1/media/upload/multipart/${up.id}`, apiKey)).json().data
  t.same(
    listed.parts.map((p: { partNumber: number; sizeBytes: number }) => [p.partNumber, p.sizeBytes]),
    [
      [1, 100],
      [2, 40],
      [3, file.length - 200],
    ],
  )
  const resent = await put(2, file.subarray(100, 200))
  t.equal(resent.json().data.sizeBytes, 100)
  t.equal((await put(4, Buffer.alloc(101))).statusCode, 413, 'a part over the part limit')
  t.equal((await put(4, Buffer.from('x'), 'text/plain')).statusCode, 415)
  t.equal((await put(0, Buffer.from('x'))).statusCode, 422)

  const done = await h.req('POST', `/v1/media/upload/multipart/${up.id}/complete`, apiKey)
  t.equal(done.statusCode, 201)
  const item = done.json().data
  t.match(item, { name: 'Big video', kind: 'video', sizeBytes: file.length, state: 'processing' })
  await servicesOf(h.app).media.processPending()
  t.equal((await h.req('GET', `/v1/media/${item.id}`, apiKey)).json().data.durationMs, 7_500)
  t.same((await h.req('GET', `/v1/media/${item.id}/content`, apiKey)).rawPayload, file)
  t.equal((await h.req('GET', `/v1/media/upload/multipart/${up.id}`, apiKey)).statusCode, 404, 'a completed upload is gone')

  // gaps are refused; abort drops everything
  const u2 = (await h.req('POST', '/v1/media/upload/multipart/initiate', apiKey, { name: 'x' })).json().data
  await h.app.inject({
    method: 'PUT',
    url: `/v1/media/upload/multipart/${u2.id}/parts/2`,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/octet-stream' },
    payload: Buffer.from('abc'),
  })
  const gap = await h.req('POST', `/v1/media/upload/multipart/${u2.id}/complete`, apiKey)
  t.equal(gap.statusCode, 422)
  t.match(gap.json().message, /Part 1 is missing/)
  t.same((await h.req('POST', `/v1/media/upload/multipart/${u2.id}/abort`, apiKey)).json().data, { id: u2.id, aborted: true })
  t.equal((await h.req('POST', `/v1/media/upload/multipart/${u2.id}/complete`, apiKey)).statusCode, 404)
  t.notOk(fs.existsSync(servicesOf(h.app).media.store.uploadDir(u2.id)))
  t.equal((await h.req('POST', '/v1/media/upload/multipart/initiate', apiKey, { name: 'x', folderId: 'fld_x' })).json().error, 'invalid_folder')

  // an expired upload is gone
  const u3 = (await h.req('POST', '/v1/media/upload/multipart/initiate', apiKey, { name: 'old' })).json().data
  h.clock.advance(25 * 3600_000)
  t.equal((await h.req('GET', `/v1/media/upload/multipart/${u3.id}`, apiKey)).statusCode, 404)
  t.equal(await servicesOf(h.app).media.purgeExpiredUploads(), 1)
})

t.test('import-url: refused for loopback, private and non-https addresses (400 unsafe_url)', async (t) => {
  const h = await buildMedia(t)
  const { apiKey } = await h.workspace()
  for (const url of [
    'https://127.0.0.1/a.png',
    'https://localhost/a.png',
    'https://10.1.2.3/a.png',
    'https://[::1]/a.png',
    'https://[::ffff:192.168.0.1]/x',
    'http://example.com/a.png',
    'not a url',
  ]) {
    const res = await h.req('POST', '/v1/media/import-url', apiKey, { url })
    t.equal(res.statusCode, 400, url)
    t.equal(res.json().error, 'unsafe_url', url)
  }
  t.equal((await h.req('POST', '/v1/media/import-url', apiKey, {})).statusCode, 422)
  t.equal((await h.req('GET', '/v1/media', apiKey)).json().data.length, 0)
})
