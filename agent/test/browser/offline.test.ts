// Offline first, in a real browser: a real agent paired with a real cloud caches the
// playlist's files before showing it; then the cloud and the media host are stopped, the
// agent restarts on the same data dir and port, and a freshly loaded page still plays the
// playlist from the agent's own cache (screenshot pixels), recording the plays on disk.
import t from 'tap'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { topics } from '@svc/shared/mqtt/index'
import { Agent, type AgentOptions } from '../../src/Agent.js'
import { captureLog, tempDir, until } from '../helpers.js'
import { startCloud } from '../cloud.js'
import { fileServer, launch, missingChromium, screenshot, solid, solidPng, type Rgb } from './chromium.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const PALETTE: Record<string, Rgb> = { red: [230, 20, 20], green: [20, 200, 40] }
const skip = missingChromium(t)

t.test('with the cloud gone, the content keeps playing from the cache across an agent restart', { skip: skip ?? false }, async (t) => {
  const { page } = await launch(t)
  const media = await fileServer(t, {
    'red.png': { body: solidPng(64, 36, PALETTE.red!), type: 'image/png' },
    'green.png': { body: solidPng(64, 36, PALETTE.green!), type: 'image/png' },
  })
  const cloud = await startCloud(t)
  const dataDir = tempDir(t)
  const options = (log: AgentOptions['log'], playerPort: number): AgentOptions => ({
    cloudUrl: cloud.base,
    dataDir,
    playerPort,
    ...(log ? { log } : {}),
    pairing: { pollIntervalMs: 50, pollIntervalCapMs: 200 },
    backoff: { baseMs: 200, capMs: 1000 },
  })
  const first = new Agent(options(captureLog().log, 0))
  t.after(() => first.stop())
  const code = once(first, 'code')
  await first.start()
  const [registration] = await code
  const connected = once(first, 'connected')
  const screenId = await cloud.pair(registration.pairingCode)
  await connected
  const port = first.player.port!
  await page.goto(`http://127.0.0.1:${port}/`)

  const item = (id: string, file: string) => ({ contentKind: 'media', contentId: id, durationMs: 700, url: media.url(file), mimeType: 'image/png' })
  await cloud.publish(topics.desired(screenId), {
    version: 500,
    screenId,
    timezone: 'UTC',
    assignment: {
      contentKind: 'playlist',
      contentId: 'pl_rg',
      content: { name: 'Red/Green', items: [item('med_red', 'red.png'), item('med_green', 'green.png')] },
    },
    schedule: null,
    casts: [],
    emergency: null,
    panel: null,
    generatedAt: new Date().toISOString(),
  })

  /**
   * Colours seen in screenshots, runs merged, until `runs` of them were seen (on a busy machine
   * a screenshot can take longer than an item plays, so it watches for the runs, not for a
   * fixed time); a hang guard (HANG_GUARD_MS) ends it with what it saw.
   */
  const watch = async (runs: number): Promise<string[]> => {
    const out: string[] = []
    const end = Date.now() + HANG_GUARD_MS
    while (out.length < runs && Date.now() < end) {
      const c = solid(await screenshot(page), PALETTE)
      if (c && out.at(-1) !== c) out.push(c)
      await sleep(40)
    }
    return out
  }
  t.ok(await until(5 * 60_000, async () => (solid(await screenshot(page), PALETTE) ? true : undefined)), 'the playlist shows')
  const online = await watch(3)
  t.ok(online.length >= 3, `online it alternates: ${online.join(' ')}`)
  t.equal(media.hits.filter((h) => h === 'red.png').length, 1, 'each file was downloaded once, then played from the cache')

  // The cloud and the media host go away; then the agent restarts.
  const down = once(first, 'disconnected')
  await cloud.close()
  await media.close()
  await down
  await first.stop()
  const restartAt = Date.now()
  const { log, lines } = captureLog()
  const second = new Agent(options(log, port))
  t.after(() => second.stop())
  await second.start()
  t.equal(second.phase, 'running', 'the restarted agent runs from its stored credential')
  await page.reload()
  t.ok(await until(5 * 60_000, async () => (solid(await screenshot(page), PALETTE) ? true : undefined)), 'the reloaded page shows the playlist')
  const offline = await watch(3)
  t.ok(offline.length >= 3, `offline, after the restart, it still alternates: ${offline.join(' ')}`)
  t.match(await page.evaluate('[...document.images].map((i) => i.getAttribute("src")).join(" ")'), /^\/media\/[0-9a-f]{64}$/, 'from the local cache')
  t.same(
    lines.filter((l) => l.msg === 'media download failed'),
    [],
    'nothing had to be downloaded again',
  )

  const debugAt = Date.now()
  // The debug overlay tells a technician what is going on; normal play shows none of it.
  const debug = await page.browser().newPage()
  await debug.setViewport({ width: 1280, height: 720 })
  await debug.goto(`http://127.0.0.1:${port}/?debug=1`)
  t.ok(
    await until(5 * 60_000, async () => ((await debug.evaluate('document.body.innerText')) as string).includes('OFFLINE') || undefined),
    'with ?debug=1 the page says it is offline',
  )
  t.match(await debug.evaluate('document.body.innerText'), screenId)
  t.equal(await page.evaluate('document.body.innerText.trim()'), '', 'without it, nothing but the content')
  await debug.close()

  await second.stop()
  const records = await second.playLog.all()
  // The plays of the kiosk page after the restart (the debug page records its own too).
  const after = records.filter((r) => Date.parse(r.startedAt) >= restartAt && Date.parse(r.startedAt) < debugAt)
  t.ok(after.length >= 3, `plays after the restart are recorded (${after.length})`)
  t.ok(
    after.every((r, i) => i === 0 || r.itemId !== after[i - 1]!.itemId),
    `and alternate: ${after.map((r) => r.itemId).join(' ')}`,
  )
  t.ok(after.every((r) => r.screenId === screenId && r.source === 'assignment' && r.contentId === 'pl_rg'))
})
