// A screenshot of what the display shows: cage (the kiosk compositor) runs headless
// (wlroots' headless backend, its pixman software renderer) with a window that is NOT the
// player page in it (a foot terminal painted solid blue: an operating-system window on the
// glass), as an unprivileged user the way the kiosk unit runs it. The agent is configured
// with the compositor's Wayland socket; its player plays a red cast. Its screenshot job
// captures the compositor's output with grim: the image the cloud hands back is the
// compositor's output (its size, marked `source: "display"`) and shows the blue window at
// every sample, never the red of a page render and never black (a compositor that drew
// nothing). Debian 12's cage draws a Chromium window only in part under pixman (see the
// installer guide), so the window is foot, which it draws whole.
import t, { type Test } from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { topics } from '@svc/shared/mqtt/index'
import { displayWindow, HANG_GUARD_MS, toolTest } from '@svc/shared/testing'
import { Agent } from '../../src/Agent.js'
import { captureDisplay } from '../../src/jobs/Screenshotter.js'
import { captureLog, eventually, tempDir } from '../helpers.js'
import { startCloud } from '../cloud.js'
import { decodePng, fileServer, grid, near, solidPng, type Bitmap, type Rgb } from './chromium.js'

/** How long the kiosk gets after SIGTERM before it is killed. */
const KILL_AFTER_MS = 10_000

const RED: Rgb = [230, 20, 20]
const BLUE: Rgb = [20, 40, 230]
const BROWSER = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p)) ?? '/usr/bin/chromium'

/** Samples away from the edges (the output is the page's colour everywhere, but keep clear of any border). */
const inner = (bm: Bitmap) => grid(bm, 9, 5).filter((p) => p.x > 4 && p.y > 4 && p.x < bm.width - 5 && p.y < bm.height - 5)

/** cage with a foot terminal painted `rgb`, as `nobody`, headless; its Wayland socket once it is up. Stopped in t.after. */
async function windowInCage(t: Test, rgb: Rgb): Promise<string> {
  const home = tempDir(t)
  execFileSync('chown', ['nobody', home])
  fs.chmodSync(home, 0o700)
  const vars = [`HOME=${home}`, `XDG_RUNTIME_DIR=${home}`, 'WLR_BACKENDS=headless', 'WLR_RENDERER=pixman', 'WLR_LIBINPUT_NO_DEVICES=1']
  const hex = rgb.map((c) => c.toString(16).padStart(2, '0')).join('')
  // Text, cursor and background all one colour: the window is a solid block.
  const colours = [`colors.background=${hex}`, `colors.foreground=${hex}`, `cursor.color=${hex} ${hex}`].flatMap((o) => ['-o', o])
  const child = spawn('runuser', ['-u', 'nobody', '--', 'env', '-i', 'PATH=/usr/bin:/bin', ...vars, 'cage', '-s', '--', 'foot', ...colours, 'sleep', '3600'], {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4000)))
  const exited = once(child, 'exit')
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, 'SIGTERM')
      } catch {
        /* gone */
      }
      const guard = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL')
        } catch {
          /* gone */
        }
      }, KILL_AFTER_MS)
      await exited
      clearTimeout(guard)
    }
  })
  return eventually(`cage's Wayland socket in ${home}`, () => {
    if (child.exitCode !== null) throw new Error(`cage exited ${child.exitCode}: ${stderr}`)
    const name = fs.readdirSync(home).find((f) => /^wayland-\d+$/.test(f))
    return name ? path.join(home, name) : undefined
  }).catch((err: Error) => {
    throw new Error(`${err.message} (cage: ${stderr.slice(-1500)})`)
  })
}

toolTest(t, displayWindow, 'under cage the screenshot is what the display shows (a window that is not the player page), marked display', async (t) => {
  const files = await fileServer(t, { 'red.png': { body: solidPng(64, 36, RED), type: 'image/png' } })
  const socket = await windowInCage(t, BLUE)
  // The compositor's output as grim takes it directly, once the window is on it: a hang
  // guard whose expiry fails the test (a compositor that draws nothing leaves it black).
  let last = 'no capture yet'
  const direct = await eventually("the blue window in cage's output", async () => {
    await new Promise((r) => setTimeout(r, 200)) // a grim capture at most five times a second
    const bm = decodePng(await captureDisplay({ waylandDisplay: socket }))
    const off = inner(bm).filter((p) => !near(p.rgb, BLUE))
    last = off.length ? `${off.length} samples not blue, e.g. rgb(${off[0]!.rgb.join(',')}) at ${off[0]!.x},${off[0]!.y}` : 'blue'
    return off.length ? undefined : bm
  }).catch((err: Error) => {
    throw new Error(`${err.message}; last grim capture: ${last}`)
  })
  t.not(`${direct.width}x${direct.height}`, '640x360', `the compositor's output is ${direct.width}×${direct.height}, not the page render's size`)

  const cloud = await startCloud(t)
  const { log, lines } = captureLog()
  const agent = new Agent({
    cloudUrl: cloud.base,
    dataDir: tempDir(t),
    playerPort: 0,
    log,
    // grim's limit is a hang guard here: on a busy machine a capture can take longer than the
    // product's 15 s, and the fallback to the page render is not what this test is about.
    screenshot: { executablePath: BROWSER, width: 640, height: 360, waylandDisplay: socket, displayTimeoutMs: HANG_GUARD_MS },
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
        content: { name: 'Red', url: files.url('red.png'), mimeType: 'image/png' },
        triggeredAt: new Date(Date.now() - 1000).toISOString(),
        expiresAt: null,
      },
    ],
    emergency: null,
    panel: null,
    generatedAt: new Date().toISOString(),
  })
  await eventually('the red cast as the view', () => (agent.player.view.type === 'playing' && agent.player.view.castId === 'cast_red' ? true : undefined))

  const { id } = ((await (await cloud.request('POST', `/v1/screens/${screenId}/screenshot`)).json()) as { data: { id: string } }).data
  const shot = await eventually(`screenshot ${id} finished`, async () => {
    const s = ((await (await cloud.request('GET', `/v1/screenshots/${id}`)).json()) as { data: Record<string, any> }).data
    return s.status === 'ok' || s.status === 'failed' ? s : undefined
  })
  const fallback = lines.find((l) => l.msg === 'display capture failed; rendering the player page instead')
  t.match(
    shot,
    { status: 'ok', source: 'display', width: direct.width, height: direct.height },
    `the display's size, marked display (${shot.reason ?? ''}${fallback ? `; the capture failed: ${String(fallback.reason)}` : ''})`,
  )
  const bm = decodePng(Buffer.from(await (await cloud.request('GET', shot.imageUrl)).arrayBuffer()))
  t.same(
    inner(bm).filter((p) => near(p.rgb, RED)),
    [],
    'the image is not the player page (the red cast a page render shows)',
  )
  t.same(
    inner(bm).filter((p) => !near(p.rgb, BLUE)),
    [],
    'the image is the window the display shows (blue at every sample: not black, not the red page)',
  )
  t.match(
    lines.find((l) => l.msg === 'screenshot uploaded'),
    { jobId: id, source: 'display' },
  )

  // A capture over the limit (the cloud's 16 MiB: a 4K display showing a photo can make one)
  // is taken again at half the scale: here the limit is a byte under the full capture's size.
  const full = await captureDisplay({ waylandDisplay: socket })
  const fitted = await captureDisplay({ waylandDisplay: socket, maxBytes: full.length - 1 })
  const half = decodePng(fitted)
  t.equal(`${half.width}x${half.height}`, `${direct.width / 2}x${direct.height / 2}`, 'taken again at half the scale')
  t.ok(fitted.length < full.length, `and it fits (${fitted.length} < ${full.length} bytes)`)
  t.same(
    inner(half).filter((p) => !near(p.rgb, BLUE)),
    [],
    'still the window the display shows',
  )
})
