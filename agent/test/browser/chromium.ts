// Browser tests' helpers: the system Chromium through puppeteer-core (never a downloaded
// browser), a skip line when it is missing outside CI (a failure in CI), PNG encode and
// decode for solid test images and screenshots, and pixel sampling across the frame.
import type { Test } from 'tap'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core'
import { chromium, HANG_GUARD_MS, missingTool, toolsRequired } from '@svc/shared/testing'
import { processShared } from '@svc/shared/testing/processShared'

/** The browser: CHROME_PATH, else the first Chromium on PATH (Debian's is /usr/bin/chromium). */
export const CHROMIUM =
  process.env.CHROME_PATH ??
  ['chromium', 'chromium-browser', 'google-chrome']
    .flatMap((n) =>
      (process.env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((d) => path.join(d, n)),
    )
    .find((p) => fs.existsSync(p)) ??
  '/usr/bin/chromium'
export const WIDTH = 1280
export const HEIGHT = 720

/** Null when Chromium is there; else why the browser tests skip (or fail, with CI=true). */
export function missingChromium(t: Test): string | null {
  const missing = missingTool(chromium)
  if (!missing) return null
  if (toolsRequired()) t.fail(`${missing} (CI is set: a missing tool fails)`)
  return missing
}

/**
 * One Chromium for the tests of a process (a folder's files share it until the folder's last
 * file has run: `processShared`); each `launch` is a browser context of its own (its own
 * cookies, storage and cache, like a fresh browser) closed when its test ends.
 */
const chromiumShared = processShared<{ browser: Browser; userDataDir: string }>(
  async () => {
    const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-chromium-'))
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--autoplay-policy=no-user-gesture-required',
        `--window-size=${WIDTH},${HEIGHT}`,
      ],
    })
    return { browser, userDataDir }
  },
  async ({ browser, userDataDir }) => {
    await browser.close().catch(() => {})
    fs.rmSync(userDataDir, { recursive: true, force: true })
  },
  ({ browser }, lost) => browser.once('disconnected', lost),
)

export async function launch(t: Test): Promise<{ browser: BrowserContext; page: Page }> {
  const { browser: chromium } = await chromiumShared.use(t)
  const browser = await chromium.createBrowserContext()
  t.after(() => browser.close().catch(() => {}))
  const page = await browser.newPage()
  // A hang guard for every wait on the page (puppeteer's own is 30 s, which a busy machine overruns).
  page.setDefaultTimeout(HANG_GUARD_MS)
  await page.setViewport({ width: WIDTH, height: HEIGHT })
  return { browser, page }
}

// --- PNG ---------------------------------------------------------------------------------

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
function crc32(buf: Buffer): number {
  let c = 0xffffffff
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(data.length)
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(td))
  return Buffer.concat([len, td, crc])
}

/** A solid-colour RGB PNG. */
export function solidPng(width: number, height: number, [r, g, b]: readonly [number, number, number]): Buffer {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8
  ihdr[9] = 2
  const row = Buffer.alloc(1 + width * 3)
  for (let x = 0; x < width; x++) row.set([r, g, b], 1 + x * 3)
  const raw = Buffer.concat(Array.from({ length: height }, () => row))
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

export interface Bitmap {
  width: number
  height: number
  /** RGB of a pixel. */
  at(x: number, y: number): [number, number, number]
}

/** Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium's screenshots are). */
export function decodePng(png: Buffer): Bitmap {
  let pos = 8
  let width = 0
  let height = 0
  let channels = 0
  const idat: Buffer[] = []
  while (pos < png.length) {
    const len = png.readUInt32BE(pos)
    const type = png.toString('ascii', pos + 4, pos + 8)
    const data = png.subarray(pos + 8, pos + 8 + len)
    if (type === 'IHDR') {
      width = data.readUInt32BE(0)
      height = data.readUInt32BE(4)
      if (data[8] !== 8 || data[12] !== 0) throw new Error('decodePng: only 8-bit non-interlaced')
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0
      if (!channels) throw new Error(`decodePng: colour type ${data[9]}`)
    } else if (type === 'IDAT') idat.push(data)
    pos += 12 + len
  }
  const raw = zlib.inflateSync(Buffer.concat(idat))
  const stride = width * channels
  const out = Buffer.alloc(height * stride)
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)]!
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    const o = y * stride
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[o + i - channels]! : 0
      const b = y > 0 ? out[o - stride + i]! : 0
      const c = y > 0 && i >= channels ? out[o - stride + i - channels]! : 0
      let v = src[i]!
      if (f === 1) v += a
      else if (f === 2) v += b
      else if (f === 3) v += (a + b) >> 1
      else if (f === 4) {
        const p = a + b - c
        const pa = Math.abs(p - a)
        const pb = Math.abs(p - b)
        const pc = Math.abs(p - c)
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c
      }
      out[o + i] = v & 0xff
    }
  }
  return { width, height, at: (x, y) => [out[y * stride + x * channels]!, out[y * stride + x * channels + 1]!, out[y * stride + x * channels + 2]!] }
}

/** The frame as a bitmap; `scale` < 1 captures it smaller (fast, for frequent sampling). */
export async function screenshot(page: Page, scale = 1): Promise<Bitmap> {
  const clip = scale === 1 ? {} : { clip: { x: 0, y: 0, width: WIDTH, height: HEIGHT, scale } }
  return decodePng(Buffer.from(await page.screenshot({ type: 'png', ...clip })))
}

/** A cols × rows grid of points spread over the whole frame, edges and corners included. */
export function grid(bm: Bitmap, cols = 9, rows = 5): Array<{ x: number; y: number; rgb: [number, number, number] }> {
  const out = []
  for (let j = 0; j < rows; j++)
    for (let i = 0; i < cols; i++) {
      const x = Math.round((i * (bm.width - 1)) / (cols - 1))
      const y = Math.round((j * (bm.height - 1)) / (rows - 1))
      out.push({ x, y, rgb: bm.at(x, y) })
    }
  return out
}

export type Rgb = readonly [number, number, number]

export function near(a: Rgb, b: Rgb, tol = 40): boolean {
  return Math.abs(a[0] - b[0]) <= tol && Math.abs(a[1] - b[1]) <= tol && Math.abs(a[2] - b[2]) <= tol
}

/** The palette name every sample of the frame (or of its top `part`) matches, else null. */
export function solid(bm: Bitmap, palette: Record<string, Rgb>, tol = 40, part = 1): string | null {
  const pts = grid(bm).filter((p) => p.y <= (bm.height - 1) * part)
  for (const [name, rgb] of Object.entries(palette)) if (pts.every((p) => near(p.rgb, rgb, tol))) return name
  return null
}

/** A tiny HTTP file server standing in for the cloud's media storage; closed in t.after. */
export async function fileServer(
  t: Test,
  files: Record<string, { body: Buffer; type: string }>,
): Promise<{ url: (name: string) => string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = []
  const server = http.createServer((req, res) => {
    const name = new URL(req.url ?? '/', 'http://x').pathname.slice(1)
    hits.push(name)
    const f = files[name]
    if (!f) return void res.writeHead(404).end()
    res.writeHead(200, { 'content-type': f.type, 'content-length': f.body.length }).end(f.body)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const port = (server.address() as AddressInfo).port
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    server.closeAllConnections()
    await new Promise<void>((r) => server.close(() => r()))
  }
  t.after(close)
  return { url: (name) => `http://127.0.0.1:${port}/${name}`, hits, close }
}

/** A short solid-colour WebM made by the browser itself (canvas → MediaRecorder), as bytes. */
export async function makeWebm(browser: Browser | BrowserContext, rgb: Rgb, ms: number): Promise<Buffer> {
  const p = await browser.newPage()
  p.setDefaultTimeout(HANG_GUARD_MS)
  try {
    // As text: this package has no DOM typings.
    const b64 = (await p.evaluate(`(async () => {
      const c = document.createElement('canvas');
      c.width = 64;
      c.height = 36;
      const g = c.getContext('2d');
      const rec = new MediaRecorder(c.captureStream(30), { mimeType: 'video/webm;codecs=vp8' });
      const parts = [];
      rec.ondataavailable = (e) => parts.push(e.data);
      const stopped = new Promise((r) => (rec.onstop = r));
      rec.start(100);
      const end = performance.now() + ${Number(ms)};
      await new Promise((r) => {
        const frame = () => {
          g.fillStyle = 'rgb(${rgb.map(Number).join(',')})';
          g.fillRect(0, 0, 64, 36);
          if (performance.now() < end) requestAnimationFrame(frame);
          else r();
        };
        frame();
      });
      rec.stop();
      await stopped;
      const bytes = new Uint8Array(await new Blob(parts).arrayBuffer());
      let s = '';
      for (const x of bytes) s += String.fromCharCode(x);
      return btoa(s);
    })()`)) as string
    return Buffer.from(b64, 'base64')
  } finally {
    await p.close()
  }
}
