// The media cache and the play log on a real disk, with media from a real HTTP server:
// downloads, sha256 checks, the bound with least-recently-used eviction (never a file the
// desired state needs), the index across a restart, byte ranges from the player server;
// the play log's records, batches, cursor and damaged lines.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { createHash } from 'node:crypto'
import type { DesiredState } from '@svc/shared/mqtt/index'
import { MediaCache, keyOf, wantedBy, type Wanted } from '../../src/playback/MediaCache.js'
import { PlayLog } from '../../src/playback/PlayLog.js'
import { PlayerServer } from '../../src/player/PlayerServer.js'
import { FakeTime, captureLog, tempDir } from '../helpers.js'

async function host(t: Test, files: Record<string, Buffer>) {
  const hits: string[] = []
  const server = http.createServer((req, res) => {
    const name = (req.url ?? '/').split('?')[0]!.slice(1)
    hits.push(name)
    const body = files[name]
    if (!body) return void res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'image/png' }).end(body)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.after(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { base, hits }
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')
const want = (base: string, name: string, sha256: string | null = null): Wanted => ({
  key: keyOf({ url: `${base}/${name}`, mimeType: 'image/png', ...(sha256 ? { sha256 } : {}) }, base)!,
  url: `${base}/${name}`,
  mimeType: 'image/png',
  sha256,
})

t.test('downloads once, checks sha256, evicts the least recently used beyond the bound, keeps what is needed', async (t) => {
  const a = Buffer.alloc(400, 1)
  const b = Buffer.alloc(400, 2)
  const c = Buffer.alloc(400, 3)
  const srv = await host(t, { 'a.png': a, 'b.png': b, 'c.png': c })
  const dataDir = tempDir(t)
  const time = new FakeTime('2026-01-01T00:00:00Z')
  const { log, lines } = captureLog()
  const cache = new MediaCache({ dataDir, cloudUrl: srv.base, maxBytes: 1000, log, clock: time.clock })

  const wa = want(srv.base, 'a.png', sha(a))
  const wb = want(srv.base, 'b.png')
  t.equal(wa.key, sha(a), 'a file with a sha256 is keyed by it')
  const got = await cache.ensure([wa, wb])
  t.same([...got].sort(), [wa.key, wb.key].sort())
  t.same(fs.readFileSync(cache.file(wa.key)), a, 'bytes on disk')
  await cache.ensure([wa, wb])
  t.same(srv.hits, ['a.png', 'b.png'], 'downloaded once each')

  // A wrong sha256 is refused and nothing is kept.
  const bad = { ...want(srv.base, 'c.png'), sha256: sha(a), key: 'f'.repeat(64) }
  t.same([...(await cache.ensure([bad]))], [], 'a mismatching download is not cached')
  t.ok(lines.some((l) => l.msg === 'media download failed' && String((l.err as { message: string }).message).includes('sha256 mismatch')))
  t.notOk(fs.existsSync(cache.file(bad.key)))
  t.same(
    fs.readdirSync(cache.dir).filter((f) => f.includes('.part')),
    [],
    'no partial file left',
  )

  // Use b later than a; then c needs room: a (least recently used) goes, b and c stay.
  time.advance(1000)
  cache.lookup(wb.key)
  time.advance(1000)
  const wc = want(srv.base, 'c.png')
  await cache.ensure([wc])
  t.ok(cache.has(wc.key) && cache.has(wb.key), 'the needed file and the recently used one stay')
  t.notOk(cache.has(wa.key), 'the least recently used is evicted')
  t.notOk(fs.existsSync(cache.file(wa.key)), 'and its file removed')
  t.ok(cache.usedBytes <= 1000, `within the bound (${cache.usedBytes} bytes)`)

  // Everything needed stays even beyond the bound (with a warning): never a missing file on screen.
  await cache.ensure([wa, wb, wc])
  t.ok(cache.has(wa.key) && cache.has(wb.key) && cache.has(wc.key))
  t.ok(lines.some((l) => l.msg === 'the media the desired state needs exceeds the cache bound'))

  // A restart reads the index back: nothing is downloaded again.
  const again = new MediaCache({ dataDir, cloudUrl: srv.base, maxBytes: 1000, log, clock: time.clock })
  const before = srv.hits.length
  await Promise.all([again.load(), again.load()])
  t.ok(again.has(wb.key) && again.has(wc.key), 'index read back')
  await again.ensure([wb, wc])
  t.equal(srv.hits.length, before, 'no download after a restart')
  t.throws(() => new MediaCache({ dataDir, cloudUrl: srv.base, maxBytes: 0, log, clock: time.clock }), /maxBytes/)
})

t.test('wantedBy lists every cacheable file of a desired state, once', async (t) => {
  const img = (id: string) => ({ contentKind: 'media' as const, contentId: id, url: `/v1/media/${id}/content?sig=${Math.random()}`, mimeType: 'image/png' })
  const desired = {
    version: 1,
    screenId: 's',
    timezone: 'UTC',
    assignment: {
      contentKind: 'playlist',
      contentId: 'pl',
      content: { items: [img('m1'), img('m2'), { contentKind: 'app', contentId: 'a1', url: 'https://app.example/' }] },
    },
    schedule: null,
    library: [
      {
        kind: 'layout',
        id: 'l1',
        content: { config: { zones: [{ id: 'z', content: { kind: 'media', id: 'm3', url: '/v1/media/m3/content', mimeType: 'video/mp4' } }] } },
      },
    ],
    casts: [{ id: 'c', contentKind: 'media', contentId: 'm1', content: img('m1'), triggeredAt: '2026-01-01T00:00:00Z', expiresAt: null }],
    emergency: null,
    panel: null,
    generatedAt: '2026-01-01T00:00:00Z',
  } as unknown as DesiredState
  const w = wantedBy(desired, 'https://cloud.example')
  t.same(w.map((x) => x.url.replace(/\?.*/, '')).sort(), [
    'https://cloud.example/v1/media/m1/content',
    'https://cloud.example/v1/media/m2/content',
    'https://cloud.example/v1/media/m3/content',
  ])
  t.same(wantedBy(null, 'https://cloud.example'), [])
})

t.test('the player server serves cached files with byte ranges', async (t) => {
  const dataDir = tempDir(t)
  const file = path.join(dataDir, 'f')
  fs.writeFileSync(file, Buffer.from('0123456789'))
  const key = 'a'.repeat(64)
  const server = new PlayerServer({ port: 0, log: captureLog().log, media: (k) => (k === key ? { file, mimeType: 'video/webm', bytes: 10 } : null) })
  await server.start()
  t.after(() => server.stop())
  const url = `http://127.0.0.1:${server.port}/media/${key}`
  const full = await fetch(url)
  t.equal(full.status, 200)
  t.equal(full.headers.get('content-type'), 'video/webm')
  t.equal(await full.text(), '0123456789')
  const part = await fetch(url, { headers: { range: 'bytes=2-5' } })
  t.equal(part.status, 206)
  t.equal(part.headers.get('content-range'), 'bytes 2-5/10')
  t.equal(await part.text(), '2345')
  const tail = await fetch(url, { headers: { range: 'bytes=-3' } })
  t.equal(await tail.text(), '789')
  t.equal((await fetch(url, { headers: { range: 'bytes=20-' } })).status, 416)
  t.equal((await fetch(`http://127.0.0.1:${server.port}/media/${'b'.repeat(64)}`)).status, 404)
  t.equal((await fetch(`http://127.0.0.1:${server.port}/media/..%2Fetc`)).status, 404)
})

t.test('the play log appends completed plays, hands out batches after a cursor, skips damaged lines', async (t) => {
  const dataDir = tempDir(t)
  const time = new FakeTime('2026-01-01T10:00:00Z')
  const { log, lines } = captureLog()
  const pl = new PlayLog({ dataDir, log, clock: time.clock })
  const play = (itemId: string) => ({
    screenId: 'scr_1',
    source: 'schedule',
    contentKind: 'playlist',
    contentId: 'pl_1',
    castId: null,
    emergencyId: null,
    itemKind: 'media',
    itemId,
    zone: null,
  })
  pl.start('1:main', play('m1'))
  time.advance(5000)
  pl.start('1:main', play('m2')) // ends m1
  time.advance(2500)
  pl.end('1:main')
  pl.end('1:main') // nothing open: no record
  pl.start('1:main/left', { ...play('m3'), zone: 'left' })
  pl.start('2:main', play('m4'))
  time.advance(1000)
  pl.endAll('1:')
  t.same(
    (await pl.all()).map((r) => [r.itemId, r.startedAt, r.endedAt, r.durationMs]),
    [
      ['m1', '2026-01-01T10:00:00.000Z', '2026-01-01T10:00:05.000Z', 5000],
      ['m2', '2026-01-01T10:00:05.000Z', '2026-01-01T10:00:07.500Z', 2500],
      ['m3', '2026-01-01T10:00:07.500Z', '2026-01-01T10:00:08.500Z', 1000],
    ],
    'completed plays, in order; the other page’s play is still open',
  )
  fs.appendFileSync(pl.file, '{not json\n')
  pl.endAll()
  const b1 = await pl.batch('scr_1', 2)
  t.same(
    b1.records.map((r) => r.itemId),
    ['m1', 'm2'],
  )
  await pl.ack(b1.cursor)
  const b2 = await pl.batch('scr_1', 10)
  t.same(
    b2.records.map((r) => r.itemId),
    ['m3', 'm4'],
    'after the cursor; the damaged line is skipped',
  )
  t.ok(lines.some((l) => l.msg === 'skipping a damaged play log line'))
  await pl.ack(b2.cursor)
  const again = new PlayLog({ dataDir, log, clock: time.clock })
  t.same((await again.batch('scr_1')).records, [], 'the cursor survives a restart')
  t.equal((await again.all()).length, 4, 'the file keeps everything (append-only)')
})
