// Screenshot jobs end to end: a real cloud, a real agent and the system Chromium. A cast of
// a solid image plays; `POST /v1/screens/<id>/screenshot` reaches the agent, which captures
// its own page headlessly and uploads the PNG with its device credential; the PNG the
// cloud hands back is the cast's colour over the whole frame, and the capture is not
// counted as a play. An agent without a browser fails the job saying so.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { topics } from '@svc/shared/mqtt/index'
import { Agent } from '../../src/Agent.js'
import { captureLog, tempDir, until } from '../helpers.js'
import { startCloud, type TestCloud } from '../cloud.js'
import { CHROMIUM, decodePng, fileServer, grid, missingChromium, near, solidPng, type Rgb } from './chromium.js'

const RED: Rgb = [230, 20, 20]
const skip = missingChromium(t)

async function pairedAgent(
  t: Test,
  cloud: TestCloud,
  screenshot: { executablePath: string | null; width: number; height: number; waylandDisplay?: string | null; grim?: string },
) {
  const { log, lines } = captureLog()
  const agent = new Agent({
    cloudUrl: cloud.base,
    dataDir: tempDir(t),
    playerPort: 0,
    log,
    // Not under a compositor unless the test says so (whatever this machine's environment has).
    screenshot: { waylandDisplay: null, ...screenshot },
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
  return { agent, screenId, lines }
}

async function finished(cloud: TestCloud, id: string): Promise<Record<string, any>> {
  const done = await until(5 * 60_000, async () => {
    const shot = ((await (await cloud.request('GET', `/v1/screenshots/${id}`)).json()) as { data: Record<string, any> }).data
    return shot.status === 'ok' || shot.status === 'failed' ? shot : undefined
  })
  if (!done) throw new Error(`screenshot ${id} never finished`)
  return done
}

t.test('a screenshot job returns a PNG of what the page shows', { skip: skip ?? false }, async (t) => {
  const media = await fileServer(t, { 'red.png': { body: solidPng(64, 36, RED), type: 'image/png' } })
  const cloud = await startCloud(t)
  // A compositor socket is configured but grim is missing: the page is rendered instead.
  const socket = path.join(tempDir(t), 'wayland-0')
  fs.writeFileSync(socket, '')
  const { agent, screenId, lines } = await pairedAgent(t, cloud, {
    executablePath: CHROMIUM,
    width: 640,
    height: 360,
    waylandDisplay: socket,
    grim: '/nonexistent/grim',
  })
  await cloud.publish(topics.desired(screenId), {
    version: 5000,
    screenId,
    timezone: 'UTC',
    assignment: null,
    schedule: null,
    casts: [
      {
        id: 'cast_red',
        contentKind: 'media',
        contentId: 'med_red',
        content: { name: 'Red', url: media.url('red.png'), mimeType: 'image/png' },
        triggeredAt: new Date(Date.now() - 1000).toISOString(),
        expiresAt: null,
      },
    ],
    emergency: null,
    panel: null,
    generatedAt: new Date().toISOString(),
  })
  t.ok(
    await until(5 * 60_000, () => (agent.player.view.type === 'playing' && agent.player.view.castId === 'cast_red' ? true : undefined)),
    'the cast is the view',
  )

  const started = Date.now()
  const res = await cloud.request('POST', `/v1/screens/${screenId}/screenshot`)
  t.equal(res.status, 202)
  const { id } = ((await res.json()) as { data: { id: string } }).data
  const shot = await finished(cloud, id)
  t.match(
    shot,
    { status: 'ok', width: 640, height: 360, mimeType: 'image/png', imageUrl: `/v1/screenshots/${id}/image`, source: 'page' },
    `done in ${Date.now() - started} ms`,
  )
  t.match(
    lines.find((l) => l.msg === 'display capture failed; rendering the player page instead'),
    { jobId: id, reason: '/nonexistent/grim is not installed (apt-get install -y grim)' },
    'without grim the page is rendered, and the log says why',
  )
  const img = await cloud.request('GET', shot.imageUrl)
  t.equal(img.status, 200)
  const bm = decodePng(Buffer.from(await img.arrayBuffer()))
  t.equal(bm.width, 640)
  t.equal(bm.height, 360)
  const off = grid(bm, 17, 9).filter((p) => !near(p.rgb, RED))
  t.same(off, [], "every sample of the screenshot is the cast image's colour")
  await agent.playLog.flush()
  t.same(await agent.playLog.all(), [], 'the capture page is not counted as a play (no kiosk page is open)')
})

t.test('without a browser the job fails with a clear reason', async (t) => {
  const cloud = await startCloud(t)
  const { screenId } = await pairedAgent(t, cloud, { executablePath: null, width: 640, height: 360 })
  const { id } = ((await (await cloud.request('POST', `/v1/screens/${screenId}/screenshot`)).json()) as { data: { id: string } }).data
  const shot = await finished(cloud, id)
  // Not under a compositor (no socket): the page is what it captures, and there is no browser for it.
  t.match(shot, { status: 'failed', reason: /no browser for screenshots on this player: install chromium/, imageUrl: null, source: null })
})
