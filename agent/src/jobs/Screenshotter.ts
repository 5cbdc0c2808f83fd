// Screenshot jobs. Under the kiosk compositor (cage) the agent captures what the display
// shows: the compositor's output, through `grim` on its Wayland socket, whatever window is
// up (the player page, a crashed browser's error, a system dialog); the upload says
// `source=display`. Without a compositor (no socket) or without grim, or when grim fails,
// it renders its own player page instead (the same page the kiosk shows, fed the same view)
// in a headless Chromium, waits until the page has put its content on screen and captures
// that (`source=page`). The PNG goes to the job's URL on the cloud with the device
// credential (HTTP Basic, screenId:deviceSecret). The capture page connects with
// `?capture=1`, so what it plays is never counted in the play log. Without a browser the
// page capture fails saying so. The browser is the system one (CHROME_PATH, else chromium
// on PATH); it is started per job and closed after, so an idle player runs no browser.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { SCREENSHOT_MAX_BYTES, type JobResult, type ScreenshotJob } from '@svc/shared/mqtt/index'
import type { Logger } from '../runtime/Logger.js'
import type { Clock } from '../runtime/time.js'
import { onOwnCloud, putDeviceUpload } from './deviceUpload.js'

/** The browser binary for captures: CHROME_PATH, else the first Chromium/Chrome on PATH; null = none. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.CHROME_PATH) return fs.existsSync(env.CHROME_PATH) ? env.CHROME_PATH : null
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean)
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'])
    for (const d of dirs) {
      const p = path.join(d, name)
      if (fs.existsSync(p)) return p
    }
  return null
}

/**
 * The compositor's Wayland socket this agent can capture, as an absolute path, or null:
 * SVC_AGENT_WAYLAND_DISPLAY (the kiosk's socket, for an agent running beside the
 * compositor), else WAYLAND_DISPLAY (an agent running under it), a name resolved in
 * XDG_RUNTIME_DIR.
 */
export function waylandSocket(env: NodeJS.ProcessEnv = process.env): string | null {
  const given = env.SVC_AGENT_WAYLAND_DISPLAY || env.WAYLAND_DISPLAY
  if (!given) return null
  if (path.isAbsolute(given)) return given
  return env.XDG_RUNTIME_DIR ? path.join(env.XDG_RUNTIME_DIR, given) : null
}

export interface DisplayCaptureOptions {
  /** The compositor's Wayland socket (absolute path); null = no compositor: the page is rendered instead. */
  waylandDisplay: string | null
  /** The capture program; default `grim` on PATH. */
  grim?: string
  /** A capture taking longer is killed and the page is rendered instead; default 15 s. */
  timeoutMs?: number
  /** The largest PNG to hand back; a larger capture is taken again at half the scale, then a quarter. Default: the cloud's limit. */
  maxBytes?: number
}

/** The scales a capture is taken at, one after the other while its PNG is over `maxBytes`. */
const CAPTURE_SCALES = [1, 0.5, 0.25] as const

/**
 * A PNG of the compositor's whole output, from `grim -` (PNG on its standard output). A
 * display of many pixels showing a photo makes a PNG over the cloud's limit (a 4K frame
 * can): it is taken again scaled down (`grim -s 0.5`, then 0.25) until it fits; the last
 * one is handed back whatever its size, and the cloud says it is too large.
 */
export async function captureDisplay(o: DisplayCaptureOptions): Promise<Buffer> {
  const maxBytes = o.maxBytes ?? SCREENSHOT_MAX_BYTES
  let png: Buffer | null = null
  for (const scale of CAPTURE_SCALES) {
    png = await grimOnce(o, scale)
    if (png.length <= maxBytes) break
  }
  return png!
}

function grimOnce(o: DisplayCaptureOptions, scale: number): Promise<Buffer> {
  const socket = o.waylandDisplay
  if (!socket) return Promise.reject(new Error('not under a compositor (no Wayland socket configured)'))
  if (!fs.existsSync(socket)) return Promise.reject(new Error(`no compositor socket at ${socket}`))
  const grim = o.grim ?? 'grim'
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', WAYLAND_DISPLAY: socket, XDG_RUNTIME_DIR: path.dirname(socket) }
    const child = spawn(grim, [...(scale === 1 ? [] : ['-s', String(scale)]), '-t', 'png', '-'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    let err = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 15_000)
    child.stdout.on('data', (c: Buffer) => out.push(c))
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString('utf8')).slice(-400)))
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      reject(new Error(e.code === 'ENOENT' ? `${grim} is not installed (apt-get install -y grim)` : `${grim}: ${e.message}`))
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const png = Buffer.concat(out)
      if (code === 0 && png.length > 8) return resolve(png)
      reject(new Error(`${grim} ${signal ? `was killed (${signal})` : `exited ${code}`}${err.trim() ? `: ${err.trim()}` : ''}`))
    })
  })
}

export interface CaptureOptions {
  /** Chromium binary; null = no browser on this player (every capture fails, saying so). */
  executablePath: string | null
  width?: number
  height?: number
  /** Longest wait for the page to show its content before capturing anyway (default 10 s). */
  readyTimeoutMs?: number
}

export class NoBrowserError extends Error {}

/** Captures the page at `url` as a PNG in a headless system Chromium. */
export async function capturePage(url: string, o: CaptureOptions): Promise<Buffer> {
  if (!o.executablePath)
    throw new NoBrowserError('no browser for screenshots on this player: install chromium (apt-get install -y chromium) or set CHROME_PATH')
  const { default: puppeteer } = await import('puppeteer-core')
  const width = o.width ?? 1920
  const height = o.height ?? 1080
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-capture-'))
  try {
    const browser = await puppeteer.launch({
      executablePath: o.executablePath,
      headless: true,
      userDataDir,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--hide-scrollbars',
        '--mute-audio',
        '--autoplay-policy=no-user-gesture-required',
        `--window-size=${width},${height}`,
      ],
    })
    try {
      const page = await browser.newPage()
      await page.setViewport({ width, height })
      await page.goto(url, { waitUntil: 'load', timeout: 15_000 })
      // The page marks itself ready once its content is on screen (or a diagnostic is).
      await page.waitForFunction("document.documentElement.dataset.ready === '1'", { timeout: o.readyTimeoutMs ?? 10_000 }).catch(() => undefined)
      await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))')
      return Buffer.from(await page.screenshot({ type: 'png' }))
    } finally {
      await browser.close().catch(() => undefined)
    }
  } finally {
    fs.rmSync(userDataDir, { recursive: true, force: true })
  }
}

export interface ScreenshotRunnerOptions {
  cloudUrl: string
  screenId: string
  deviceSecret: string
  /** The local player page's URL (null while its server is not listening). */
  pageUrl: () => string | null
  capture: CaptureOptions
  /** The display capture, tried first; absent or without a socket = the page is rendered. */
  display?: DisplayCaptureOptions
  fetch?: (input: string, init?: RequestInit) => Promise<Response>
  log: Logger
  clock: Clock
}

/** Where to upload: the job's URL when it is on the cloud this agent talks to, else its path on that cloud. */
export function uploadTarget(job: ScreenshotJob, cloudUrl: string): string {
  return onOwnCloud(job.uploadUrl ?? `/v1/devices/screenshots/${encodeURIComponent(job.id)}`, cloudUrl)
}

export class ScreenshotRunner {
  readonly #o: ScreenshotRunnerOptions

  constructor(options: ScreenshotRunnerOptions) {
    this.#o = options
  }

  async run(job: ScreenshotJob): Promise<JobResult> {
    const { log, clock } = this.#o
    const done = (outcome: 'ok' | 'failed', reason?: string): JobResult => ({
      jobId: job.id,
      kind: 'screenshot',
      sentHex: '',
      replyHex: '',
      outcome,
      ...(reason ? { reason } : {}),
      at: clock.now().toISOString(),
    })
    let png: Buffer | null = null
    let source: 'display' | 'page' = 'display'
    if (this.#o.display?.waylandDisplay) {
      try {
        png = await captureDisplay(this.#o.display)
      } catch (err) {
        log.info({ jobId: job.id, reason: (err as Error).message }, 'display capture failed; rendering the player page instead')
      }
    }
    if (!png) {
      source = 'page'
      const page = this.#o.pageUrl()
      if (!page) return done('failed', 'the player page is not running')
      try {
        png = await capturePage(`${page}?capture=1`, this.#o.capture)
      } catch (err) {
        return done('failed', err instanceof NoBrowserError ? err.message : `capture failed: ${(err as Error).message}`.slice(0, 400))
      }
    }
    const url = new URL(uploadTarget(job, this.#o.cloudUrl))
    url.searchParams.set('source', source)
    const refused = await putDeviceUpload({
      url: url.toString(),
      screenId: this.#o.screenId,
      deviceSecret: this.#o.deviceSecret,
      contentType: 'image/png',
      body: png,
      ...(this.#o.fetch ? { fetch: this.#o.fetch } : {}),
    })
    if (refused) return done('failed', refused)
    log.info({ jobId: job.id, bytes: png.length, source }, 'screenshot uploaded')
    return done('ok')
  }
}
