// Files before the switch: with a real cloud and a media host that answers slowly, the
// player page keeps its current view until every file of the new one is on disk, then
// gets it with local `/media/<key>` URLs; a file that cannot be fetched does not hold the
// view back forever (it goes out with its remote URL, for the page to try or skip).
import t from 'tap'
import http from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket from 'ws'
import { topics } from '@svc/shared/mqtt/index'
import { Agent } from '../../src/Agent.js'
import type { PlayerView } from '../../src/player/PlayerView.js'
import { captureLog, tempDir, until } from '../helpers.js'
import { startCloud } from '../cloud.js'

t.test('the page switches only once the new content is downloaded', async (t) => {
  let release: () => void = () => {}
  const gate = new Promise<void>((r) => (release = r))
  let served = 0
  const server = http.createServer((req, res) => {
    if (req.url === '/slow.png')
      void gate.then(() => {
        served++
        res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(100, 7))
      })
    else res.writeHead(404).end()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.after(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))))
  const host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const cloud = await startCloud(t)
  const agent = new Agent({
    cloudUrl: cloud.base,
    dataDir: tempDir(t),
    playerPort: 0,
    log: captureLog().log,
    pairing: { pollIntervalMs: 50, pollIntervalCapMs: 200 },
    backoff: { baseMs: 200, capMs: 1000 },
  })
  t.after(() => agent.stop())
  const code = once(agent, 'code')
  await agent.start()
  const [registration] = await code
  const connected = once(agent, 'connected')
  const screenId = await cloud.pair(registration.pairingCode)
  await connected

  const ws = new WebSocket(`ws://127.0.0.1:${agent.player.port}/feed`)
  t.after(() => ws.terminate())
  const views: PlayerView[] = []
  ws.on('message', (d) => views.push(JSON.parse(String(d)) as PlayerView))
  await once(ws, 'open')
  const desired = (version: number, url: string) => ({
    version,
    screenId,
    timezone: 'UTC',
    assignment: { contentKind: 'media', contentId: 'med_slow', content: { name: 'Slow', url, mimeType: 'image/png' } },
    schedule: null,
    casts: [],
    emergency: null,
    panel: null,
    generatedAt: new Date().toISOString(),
  })
  await until(5 * 60_000, () => views.find((v) => v.type === 'playing' && v.source === 'none'))
  await cloud.publish(topics.desired(screenId), desired(10, `${host}/slow.png`))
  await until(5 * 60_000, () => (agent.state?.version === 10 ? true : undefined))
  await sleep(500)
  t.notOk(
    views.some((v) => v.type === 'playing' && v.source === 'assignment'),
    'while the file downloads, the page is not switched (no half-loaded item)',
  )
  release()
  const shown = await until(5 * 60_000, () => views.find((v) => v.type === 'playing' && v.source === 'assignment'))
  t.equal(served, 1)
  t.match(shown, { type: 'playing', version: 10, content: { url: /^\/media\/[0-9a-f]{64}$/ } }, 'then it switches, to the local copy')

  // A file that cannot be fetched: the view still goes out, with the remote URL.
  await cloud.publish(topics.desired(screenId), desired(11, `${host}/missing.png`))
  const fallback = await until(5 * 60_000, () => views.find((v) => v.type === 'playing' && v.version === 11))
  t.match(fallback, { content: { url: `${host}/missing.png` } })
})
