// A pull feed against a local HTTPS server serving an Atom feed of CAP entries (like a
// weather service's active-alerts feed) whose entries change between fetches: fetched through
// the outbound guard (its test allow-list and CA), conditionally (ETag), each entry's CAP
// document handled once; a real MQTT device shows the alert and then has it cleared.
import fs from 'node:fs'
import https from 'node:https'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import { CA_FILE, TLS_DIR } from '../fixtures/receiver.js'
import { connectDevice, startCloud } from '../devicelink/link.js'
import { capDoc, NWS_SENDER } from './capDocs.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const GUARD = HANG_GUARD_MS

function atom(entries: string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>https://localhost/alerts</id><title>Current watches, warnings, and advisories</title><updated>2026-06-01T12:00:00Z</updated>
  ${entries.map((id) => `<entry><id>urn:oid:${id}</id><updated>2026-06-01T12:00:00Z</updated><title>${id}</title><link rel="alternate" type="application/cap+xml" href="${base}/cap/${id}.xml"/></entry>`).join('\n  ')}
</feed>`
}

let base = ''

t.test('an Atom pull feed: new entries start and cancel, unchanged feeds answer 304, each document is fetched once', async (t) => {
  const docs = new Map<string, string>([
    ['KSTO1', capDoc({ identifier: 'KSTO1' })],
    ['KSTO2', capDoc({ identifier: 'KSTO2', msgType: 'Cancel', references: `${NWS_SENDER},KSTO1,2026-06-01T04:55:01-07:00` })],
  ])
  let entries = ['KSTO1']
  let etag = '"v1"'
  const requests: { path: string; ifNoneMatch: string | undefined }[] = []
  const server = https.createServer(
    { key: fs.readFileSync(path.join(TLS_DIR, 'server-key.pem')), cert: fs.readFileSync(path.join(TLS_DIR, 'server.pem')) },
    (req, res) => {
      const inm = req.headers['if-none-match']
      requests.push({ path: req.url ?? '', ifNoneMatch: typeof inm === 'string' ? inm : undefined })
      if (req.url === '/alerts.atom') {
        if (inm === etag) return void res.writeHead(304).end()
        return void res.writeHead(200, { 'content-type': 'application/atom+xml', etag }).end(atom(entries))
      }
      const doc = docs.get(/^\/cap\/(.+)\.xml$/.exec(req.url ?? '')?.[1] ?? '')
      if (!doc) return void res.writeHead(404).end()
      res.writeHead(200, { 'content-type': 'application/cap+xml' }).end(doc)
    },
  )
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.after(() => {
    server.closeAllConnections()
    return new Promise<void>((r) => server.close(() => r()))
  })
  base = `https://localhost:${(server.address() as AddressInfo).port}`

  const c = await startCloud(t, { config: { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE } })
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_map' })
  const a = await c.pair('Lobby')
  const da = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, a)
  await da.next(() => true, GUARD)
  const res = await c.call('POST', '/v1/cap-feeds', {
    name: 'NWS',
    mode: 'pull',
    url: `${base}/alerts.atom`,
    intervalSeconds: 60,
    contentKind: 'media',
    contentId: 'med_map',
  })
  t.equal(res.status, 201, res.body.message)
  const feed = res.body.data
  const worker = servicesOf(c.running.app).capWorker

  // First fetch: the entry's CAP document starts the emergency.
  await worker.runOnce()
  const started = await da.next((s) => s.emergency !== null, GUARD)
  t.match(started.emergency!.message, /^SEVERE THUNDERSTORM WARNING/)
  t.same(
    requests.map((r) => r.path),
    ['/alerts.atom', '/cap/KSTO1.xml'],
  )
  t.match((await c.call('GET', `/v1/cap-feeds/${feed.id}`)).body.data, { lastFetchedAt: '2026-06-01T12:00:00.000Z', lastError: null })

  // Not due before its interval; then a conditional request answered 304.
  await worker.runOnce()
  t.equal(requests.length, 2, 'not fetched before intervalSeconds')
  c.clock.advance(60_000)
  await worker.runOnce()
  t.same(requests[2], { path: '/alerts.atom', ifNoneMatch: '"v1"' })
  t.equal(requests.length, 3)

  // The feed changes: a Cancel entry beside the first; only the new document is fetched.
  entries = ['KSTO1', 'KSTO2']
  etag = '"v2"'
  c.clock.advance(60_000)
  await worker.runOnce()
  t.same(
    requests.slice(3).map((r) => r.path),
    ['/alerts.atom', '/cap/KSTO2.xml'],
  )
  await da.next((s) => s.emergency === null && s.version > started.version, GUARD)
  const log = (await c.call('GET', `/v1/cap-feeds/${feed.id}/alerts`)).body.data
  t.same(
    log.map((r: any) => [r.identifier, r.state]),
    [
      ['KSTO2', 'cleared'],
      ['KSTO1', 'started'],
    ],
  )

  // A feed that stops being CAP is reported on the feed, not crashed on.
  docs.set('BAD', '<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2"><identifier>BAD</identifier></alert>')
  entries = ['BAD']
  etag = '"v3"'
  c.clock.advance(60_000)
  await worker.runOnce()
  t.match((await c.call('GET', `/v1/cap-feeds/${feed.id}`)).body.data.lastError, /not CAP 1\.2: alert\/msgType: required/)
})
