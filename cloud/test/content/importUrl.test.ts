// import-url fetching for real: an HTTPS server on loopback (the test CA, let through by the
// test-only allowlist) serves a PNG; the cloud fetches it through the outbound guard,
// sniffs it and stores it. Non-2xx answers, redirects, files over the limit and
// disallowed types are refused with the envelope, and nothing is half-written.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import https from 'node:https'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { build } from '../helpers.js'
import { CA_FILE, TLS_DIR } from '../fixtures/receiver.js'
import { PNG_1x1 } from './fixtures.js'

async function fileServer(t: Test): Promise<string> {
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"></svg>')
  const server = https.createServer({ key: fs.readFileSync(path.join(TLS_DIR, 'server-key.pem')), cert: fs.readFileSync(path.join(TLS_DIR, 'server.pem')) }, (req, res) => {
    if (req.url === '/logo.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(PNG_1x1)
    if (req.url === '/big.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.concat([PNG_1x1, Buffer.alloc(4096)]))
    if (req.url === '/drawing.svg') return res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(svg)
    if (req.url === '/moved') return res.writeHead(302, { location: '/logo.png' }).end()
    res.writeHead(404).end('nope')
  })
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
  await h.app.services.media.processPending()
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
