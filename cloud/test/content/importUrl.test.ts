// import-url fetching for real: an HTTPS server on loopback (the test CA, let through by the
// test-only allowlist) serves a PNG; the cloud fetches it through the outbound guard,
// sniffs it and stores it. Non-2xx answers, redirects, files over the limit and
// disallowed types are refused with the envelope, and nothing is half-written.
import { servicesOf } from '../../src/app.js'
import t, { type Test } from 'tap'
import fs from 'node:fs'
import https from 'node:https'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { build } from '../helpers.js'
import { CA_FILE, TLS_DIR } from '../fixtures/receiver.js'
import { PNG_1x1 } from './fixtures.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

async function fileServer(t: Test): Promise<string> {
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"></svg>')
  const server = https.createServer(
    { key: fs.readFileSync(path.join(TLS_DIR, 'server-key.pem')), cert: fs.readFileSync(path.join(TLS_DIR, 'server.pem')) },
    (req, res) => {
      if (req.url === '/logo.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(PNG_1x1)
      if (req.url === '/big.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.concat([PNG_1x1, Buffer.alloc(4096)]))
      if (req.url === '/drawing.svg') return res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(svg)
      if (req.url === '/moved') return res.writeHead(302, { location: '/logo.png' }).end()
      res.writeHead(404).end('nope')
    },
  )
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.after(() => {
    server.closeAllConnections()
    return new Promise<void>((r) => server.close(() => r()))
  })
  return `https://localhost:${(server.address() as AddressInfo).port}`
}

t.test('import-url fetches a public file into the library', async (t) => {
  const base = await fileServer(t)
  const h = await build(t, { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE, mediaImportMaxBytes: 2048 })
  const { apiKey } = await h.workspace()
  const res = await h.req('POST', '/v1/media/import-url', apiKey, { url: `${base}/logo.png` })
  t.equal(res.statusCode, 201, res.body)
  const item = res.json().data
  t.match(item, { name: 'logo.png', kind: 'image', mimeType: 'image/png', sizeBytes: PNG_1x1.length, state: 'processing' })
  await servicesOf(h.app).media.processPending()
  const ready = (await h.req('GET', `/v1/media/${item.id}`, apiKey)).json().data
  t.match(ready, { state: 'ready', width: 1, height: 1 })
  const bytes = await h.req('GET', `/v1/media/${item.id}/content`, apiKey)
  t.same(bytes.rawPayload, PNG_1x1, 'the stored bytes are the served bytes')

  const cases: [string, number, string][] = [
    ['/missing.png', 422, 'validation_error'],
    ['/moved', 422, 'validation_error'],
    ['/big.png', 413, 'too_large'],
    ['/drawing.svg', 415, 'unsupported_type'],
  ]
  for (const [p, status, code] of cases) {
    const r = await h.req('POST', '/v1/media/import-url', apiKey, { url: `${base}${p}` })
    t.equal(r.statusCode, status, p)
    t.equal(r.json().error, code, p)
  }
  t.equal((await h.req('GET', '/v1/media', apiKey)).json().data.length, 1, 'refused imports left nothing behind')
})

t.test('import-url streams to a temporary file while downloading and stops at the limit: the sender sees the connection closed early', async (t) => {
  const TOTAL = 64 * 1024 * 1024
  const FIRST = 512 * 1024
  const sent: { bytes: number; closedEarly: boolean; finished: boolean; closed: Promise<void> }[] = []
  let release: () => void = () => undefined
  const released = new Promise<void>((r) => (release = r))
  const server = https.createServer(
    { key: fs.readFileSync(path.join(TLS_DIR, 'server-key.pem')), cert: fs.readFileSync(path.join(TLS_DIR, 'server.pem')) },
    (req, res) => {
      let onClose!: () => void
      const s = { bytes: 0, closedEarly: false, finished: false, closed: new Promise<void>((r) => (onClose = r)) }
      sent.push(s)
      const chunk = Buffer.concat([PNG_1x1, Buffer.alloc(64 * 1024 - PNG_1x1.length)])
      const headers: Record<string, string> = { 'content-type': 'image/png' }
      if (req.url === '/declared.png') headers['content-length'] = String(TOTAL)
      res.writeHead(200, headers)
      res.on('close', () => {
        if (!s.finished) s.closedEarly = true
        onClose()
      })
      // Respect backpressure, as a real server does; after the first 512 KB wait for the test.
      const pump = () => {
        while (s.bytes < TOTAL && !res.destroyed) {
          if (s.bytes === FIRST && req.url === '/paused.png') return void released.then(pumpOn)
          s.bytes += chunk.length
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        if (s.bytes >= TOTAL && !res.destroyed) {
          s.finished = true
          res.end()
        }
      }
      const pumpOn = () => {
        s.bytes += chunk.length
        if (!res.write(chunk)) return void res.once('drain', pump)
        pump()
      }
      pump()
    },
  )
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.after(() => {
    release()
    server.closeAllConnections()
    return new Promise<void>((r) => server.close(() => r()))
  })
  const base = `https://localhost:${(server.address() as AddressInfo).port}`
  const LIMIT = 4 * 1024 * 1024
  const h = await build(t, { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE, mediaImportMaxBytes: LIMIT })
  const { apiKey } = await h.workspace()
  const tmpDir = path.join(servicesOf(h.app).media.store.root, 'tmp')
  const parts = () => (fs.existsSync(tmpDir) ? fs.readdirSync(tmpDir).filter((f) => f.endsWith('.part')) : [])
  const partsBefore = new Set(parts())

  // While the sender holds after 512 KB, those bytes are already in a temporary file.
  const pending = h.req('POST', '/v1/media/import-url', apiKey, { url: `${base}/paused.png` })
  let onDisk = 0
  for (const guardEnd = Date.now() + HANG_GUARD_MS; onDisk < FIRST && Date.now() < guardEnd; ) {
    await new Promise((r) => setTimeout(r, 50))
    onDisk = Math.max(
      0,
      ...parts()
        .filter((f) => !partsBefore.has(f))
        .map((f) => fs.statSync(path.join(tmpDir, f)).size),
    )
  }
  t.equal(onDisk, FIRST, 'the first 512 KB reached a temporary file before the download ended')
  release()
  const res = await pending
  t.equal(res.statusCode, 413)
  t.same(res.json(), { error: 'too_large', message: `The file at url is over the limit of ${LIMIT} bytes.` })
  await Promise.race([sent[0]!.closed, sleep(5000, undefined, { ref: false })]) // a deadline that does not hold the process
  t.equal(sent[0]!.closedEarly, true, 'the connection was closed before the body ended')
  t.ok(sent[0]!.bytes < TOTAL / 4, `the sender produced ${sent[0]!.bytes} of ${TOTAL} bytes`)

  // A Content-Length over the limit is refused before the body is read.
  const declared = await h.req('POST', '/v1/media/import-url', apiKey, { url: `${base}/declared.png` })
  t.equal(declared.statusCode, 413)
  t.equal(declared.json().error, 'too_large')
  await Promise.race([sent[1]!.closed, sleep(5000, undefined, { ref: false })]) // a deadline that does not hold the process
  t.equal(sent[1]!.closedEarly, true)
  t.ok(sent[1]!.bytes < TOTAL / 4)

  t.equal((await h.req('GET', '/v1/media', apiKey)).json().data.length, 0, 'nothing stored')
  t.same(
    parts().filter((f) => !partsBefore.has(f)),
    [],
    'no temporary file left behind',
  )
})
