// The console's screens page at fleet size (not a test), in the system Chromium: the cloud as
// `pnpm start` runs it (its CLI, its own process, a SQLite file) with N screens inserted
// straight into its database before it starts (pairing N screens through the API is what
// cast-fanout.ts measures; here the page is timed), one admin signed in through an invite
// link. With thumbnails on: every screen plays one of M media images (1920×1080 photos-like
// JPEGs with their WebP thumbnails in the media store, as the background probe leaves them)
// and has a last screenshot (one of M 1920×1080 PNGs, as agents upload them), so the
// table's "Now playing" and "Last screenshot" columns and the grid load pictures.
// Timed, R times each after a warm-up, from navigation to the first rows drawn, and to the
// first rows drawn with every picture in view loaded (decoded, or failed):
//   (a) /console/screens (the first page of 500 and the total);
//   (b) /console/screens?q=…&status=offline (a filtered page);
//   (d) /console/screens?view=grid (the wall of last screenshots);
// beside (c) a bare Fastify route in its own process serving a static page with a 40-row
// table, in the same browser. Then the server-push cost: S live event streams opened on the
// cloud, its RSS before and after, and the time from an emergency's start until every
// stream has its `emergency.started`.
//   pnpm exec tsx bench/console-screens.ts [N=10000] [--rounds=10] [--streams=200] [--pictures=60]
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import puppeteer, { type Page } from 'puppeteer-core'
import { openDatabase } from '../cloud/src/platform/db/open.js'
import { migrate } from '../cloud/src/platform/db/migrate.js'
import { testConfig } from '../cloud/src/config.js'
import { screenRow } from '../cloud/test/fixtures/screenRows.js'
import { THUMB_SIZE, imageThumbnail } from '../cloud/src/domains/media/thumbnail.js'
import { call, cli, cloudEnv, f1, freePort, killAll, loadAvg, now, pct, rssOf, startCloud, tempDir, track, uploadImage } from './lib/harness.js'
import { sharp } from './lib/sharp.js'

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback)

function chromiumPath(): string {
  return process.env.CHROME_PATH ?? '/usr/bin/chromium'
}

/** A bare Fastify in its own process answering one static page with a 40-row table. */
async function bareTablePage(): Promise<{ port: number }> {
  const port = await freePort()
  const rows = Array.from({ length: 40 }, (_, i) => `<tr><td><a href="#">Screen ${i}</a></td><td>Offline</td><td>nothing</td></tr>`).join('')
  const html = `<!doctype html><html lang="en"><title>bare</title><table><tbody>${rows}</tbody></table></html>`
  const code = `const f=require('fastify')();f.get('/',(q,r)=>r.type('text/html').send(${JSON.stringify(html)}));f.listen({port:${port},host:'127.0.0.1'}).then(()=>process.send?.('ready'))`
  const child = track(spawn(process.execPath, ['-e', code], { cwd: join(import.meta.dirname, '..', 'cloud'), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }))
  await new Promise<void>((resolve) => child.once('message', () => resolve()))
  return { port }
}

/**
 * A 1920×1080 picture that compresses like a photo (smoothed noise), as a JPEG (a media
 * file, about 0.4 MiB); or as a screenshot PNG: the photo on the left half beside a plain
 * panel (about 3 MiB, what a screen showing a picture hands back as a lossless capture).
 */
async function picture(seed: number, format: 'jpeg' | 'png'): Promise<Buffer> {
  const w = format === 'jpeg' ? 1920 : 960
  const noise = await sharp({ create: { width: w / 8, height: 135, channels: 3, noise: { type: 'gaussian', mean: 40 + ((seed * 37) % 170), sigma: 60 } } })
    .png()
    .toBuffer()
  const photo = sharp(noise).resize(w, 1080, { kernel: 'cubic' }).blur(1.2)
  if (format === 'jpeg') return photo.jpeg({ quality: 85 }).toBuffer()
  return sharp({ create: { width: 1920, height: 1080, channels: 3, background: { r: 20, g: 40, b: (seed * 53) % 255 } } })
    .composite([{ input: await photo.png().toBuffer(), left: 0, top: 0 }])
    .png()
    .toBuffer()
}

/** Keeps `bytes` in the cloud's content-addressed media store (`<dir>/media/<2 hex>/<sha256>`); their sha256. */
function store(dir: string, bytes: Buffer): string {
  const sha = createHash('sha256').update(bytes).digest('hex')
  mkdirSync(join(dir, 'media', sha.slice(0, 2)), { recursive: true })
  writeFileSync(join(dir, 'media', sha.slice(0, 2), sha), bytes)
  return sha
}

/**
 * Waits until the first rows (or cards) are drawn and every picture among them that is in
 * the viewport has loaded or failed (lazy images out of view are not waited for). Polls by
 * interval, not animation frames.
 */
async function picturesInView(tab: Page, selector: string): Promise<void> {
  await tab.waitForSelector(selector)
  await tab.waitForFunction(
    `(() => {
      const imgs = [...document.querySelectorAll('img')].filter((i) => {
        const r = i.getBoundingClientRect()
        return r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth && r.width > 0
      })
      return imgs.length > 0 && imgs.every((i) => i.complete)
    })()`,
    { polling: 20 },
  )
}

async function main(): Promise<void> {
  const N = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 10_000)
  const R = arg('rounds', 10)
  const S = arg('streams', 200)
  const dir = tempDir('svc-bench-console-')

  // The screens, written before the cloud starts (the cloud migrates the same file first).
  const dbFile = join(dir, 'svc.sqlite')
  const seedDb = await openDatabase(testConfig({ dataDir: dir, dbFile }))
  await migrate(seedDb)
  await seedDb.close()
  const httpPort = await freePort()
  const mqttPort = await freePort()
  const env = cloudEnv(dir, httpPort, mqttPort, {
    SVC_RATE_LIMIT: '100000000',
    SVC_EVENT_STREAMS_PER_WORKSPACE: String(S + 20),
    SVC_EVENT_STREAMS_PER_CREDENTIAL: String(S + 20),
  })
  const ws = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench', '--email', 'ops@example.com'])) as {
    workspaceId: string
    apiKey: string
    inviteUrl: string
  }
  const db = await openDatabase(testConfig({ dataDir: dir, dbFile }))
  const at = new Date().toISOString()
  // M media images with their thumbnails and M screenshots, in the media store and their tables.
  const M = arg('pictures', 60)
  const mediaIds: string[] = []
  const shotShas: { sha: string; size: number }[] = []
  let mediaBytes = 0
  let shotBytes = 0
  let thumbBytes = 0
  for (let m = 0; m < M; m++) {
    const jpeg = await picture(m, 'jpeg')
    const sha = store(dir, jpeg)
    const thumb = await imageThumbnail(jpeg)
    mkdirSync(join(dir, 'media', 'thumbs', sha.slice(0, 2)), { recursive: true })
    writeFileSync(join(dir, 'media', 'thumbs', sha.slice(0, 2), `${sha}.webp`), thumb)
    const id = `med_bench${String(m).padStart(4, '0')}`
    await db.kysely
      .insertInto('media')
      .values({
        id,
        workspace_id: ws.workspaceId,
        name: `Picture ${m}`,
        kind: 'image',
        mime_type: 'image/jpeg',
        size_bytes: jpeg.length,
        sha256: sha,
        state: 'ready',
        failure_reason: null,
        width: 1920,
        height: 1080,
        duration_ms: null,
        thumbnail_at: at,
        folder_id: null,
        node_id: null,
        recalled_at: null,
        recall_reason: null,
        recalled_by: null,
        created_by: 'bench',
        created_at: at,
        updated_at: at,
      })
      .execute()
    mediaIds.push(id)
    const png = await picture(m + 1000, 'png')
    shotShas.push({ sha: store(dir, png), size: png.length })
    mediaBytes += jpeg.length
    shotBytes += png.length
    thumbBytes += thumb.length
  }
  for (let i = 0; i < N; i += 500) {
    const ids = Array.from({ length: Math.min(500, N - i) }, (_, j) => i + j)
    await db.kysely
      .insertInto('screens')
      .values(
        ids.map((n) =>
          screenRow(`scr_bench${String(n).padStart(6, '0')}`, ws.workspaceId, at, {
            name: `Screen ${n}`,
            ...(M > 0
              ? {
                  reported: JSON.stringify({ version: 1, playing: { source: 'assigned', contentKind: 'media', contentId: mediaIds[n % M] }, at }),
                  reported_at: at,
                }
              : {}),
          }),
        ),
      )
      .execute()
    if (M > 0)
      await db.kysely
        .insertInto('screenshots')
        .values(
          ids.map((n) => ({
            id: `shot_bench${String(n).padStart(6, '0')}`,
            workspace_id: ws.workspaceId,
            screen_id: `scr_bench${String(n).padStart(6, '0')}`,
            status: 'ok',
            reason: null,
            sha256: shotShas[n % M]!.sha,
            size_bytes: shotShas[n % M]!.size,
            width: 1920,
            height: 1080,
            source: 'display',
            created_at: at,
            sent_at: at,
            completed_at: at,
          })),
        )
        .execute()
  }
  await db.close()
  const kib = (b: number) => f1(b / M / 1024)
  if (M > 0)
    console.log(
      `${M} pictures: media JPEG ${kib(mediaBytes)} KiB, its thumbnail (WebP, ≤ ${THUMB_SIZE} px) ${kib(thumbBytes)} KiB, screenshot PNG ${kib(shotBytes)} KiB on average`,
    )

  const cloud = await startCloud(env, join(dir, 'cloud.log'))
  const base = `http://127.0.0.1:${httpPort}`
  const bare = await bareTablePage()
  const browser = await puppeteer.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu', '--window-size=1280,800'] })
  try {
    const page = await browser.newPage()
    await page.setViewport({ width: 1280, height: 800 })
    await page.goto(`${base}${ws.inviteUrl}`)
    await page.waitForSelector('#f-password')
    await page.type('#f-password', 'a long pass phrase')
    await page.click('button[type=submit]')
    await page.waitForSelector('h1#page-title')
    console.log(`N = ${N} screens; load average ${await loadAvg()}`)

    // Each round in a new tab of the signed-in browser: nothing of the last round is kept but
    // the browser's HTTP cache, as when an operator opens the page again.
    // Each round times both: the first rows drawn, then their pictures in view loaded.
    const timeTo = async (url: string, selector: string, pictures: boolean) => {
      const tab = await browser.newPage()
      await tab.setViewport({ width: 1280, height: 800 })
      let pictureBytes = 0
      tab.on('response', (r) => {
        if (r.request().resourceType() === 'image' && !r.fromCache()) pictureBytes += Number(r.headers()['content-length'] ?? 0)
      })
      const t0 = now()
      await tab.goto(url, { waitUntil: 'domcontentloaded' })
      await tab.waitForSelector(selector)
      const rows = now() - t0
      if (pictures) await picturesInView(tab, selector)
      const withPictures = now() - t0
      await tab.close()
      return { rows, withPictures, pictureBytes }
    }
    const series = async (url: string, selector: string, pictures = M > 0) => {
      await timeTo(url, selector, pictures)
      const xs: { rows: number; withPictures: number; pictureBytes: number }[] = []
      for (let i = 0; i < R; i++) xs.push(await timeTo(url, selector, pictures))
      return {
        rows: xs.map((x) => x.rows).sort((a, b) => a - b),
        withPictures: xs.map((x) => x.withPictures).sort((a, b) => a - b),
        pictureKiB: f1(xs.reduce((n, x) => n + x.pictureBytes, 0) / xs.length / 1024),
      }
    }
    const firstRow = 'tbody tr:not(.spacer) a'
    const list = await series(`${base}/console/screens`, firstRow)
    const filtered = await series(`${base}/console/screens?q=${encodeURIComponent('Screen 99')}&status=offline`, firstRow)
    const gridView = await series(`${base}/console/screens?view=grid`, '.screen-card a')
    const bareTimes = (await series(`http://127.0.0.1:${bare.port}/`, 'tbody tr a', false)).rows
    // The API request behind the page (its first page of 500 with the total), from Node.
    const apiTimes: number[] = []
    let apiBytes = 0
    for (let i = 0; i <= R; i++) {
      const t0 = now()
      const a = await call(`${base}/v1/screens?limit=500&count=1`, { headers: { authorization: `Bearer ${ws.apiKey}` } })
      if (a.status !== 200) throw new Error(`GET /v1/screens: ${a.status}`)
      if (i > 0) apiTimes.push(now() - t0)
      apiBytes = a.text.length
    }
    apiTimes.sort((a, b) => a - b)

    // Server push: S streams, the cloud's memory, one event to all of them.
    const rssBefore = rssOf(cloud.proc.pid!)
    const streams: { got: Promise<number>; req: http.ClientRequest }[] = []
    for (let i = 0; i < S; i++) {
      let resolveGot: (t: number) => void = () => {}
      const got = new Promise<number>((r) => (resolveGot = r))
      const req = http.get(`${base}/v1/events/stream`, { headers: { authorization: `Bearer ${ws.apiKey}` } }, (res) => {
        if (res.statusCode !== 200) throw new Error(`stream ${i}: ${res.statusCode}`)
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          if (c.includes('event: emergency.started')) resolveGot(now())
        })
      })
      streams.push({ got, req })
    }
    await new Promise((r) => setTimeout(r, 2000))
    const rssAfter = rssOf(cloud.proc.pid!)
    const media = await uploadImage(base, ws.apiKey)
    const t0 = now()
    const started = await call(`${base}/v1/emergencies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ws.apiKey}` },
      body: { contentKind: 'media', contentId: media, scopeKind: 'all' },
    })
    if (started.status !== 201) throw new Error(`emergency: ${started.status} ${started.text}`)
    const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('not every stream had emergency.started within 30 s')), 30_000).unref())
    const arrivals = (await Promise.race([Promise.all(streams.map((s) => s.got)), late])).map((t) => t - t0).sort((a, b) => a - b)
    for (const s of streams) s.req.destroy()

    const row = (name: string, xs: number[], extra = '') => `| ${name} | ${f1(pct(xs, 50))} ms | ${f1(pct(xs, 90))} ms | ${extra} |`
    console.log(
      `| ${N} screens, Chromium, ${R} rounds (load average ${await loadAvg()}) | median | p90 | picture bytes over the network per load (the browser cache holds them across rounds) |`,
    )
    console.log('| --- | --- | --- | --- |')
    console.log(row('(a) /console/screens to the first rows', list.rows))
    console.log(row('(a) … with the pictures in view loaded', list.withPictures, `${list.pictureKiB} KiB`))
    console.log(row('(b) a filtered page to the first rows', filtered.rows))
    console.log(row('(b) … with the pictures in view loaded', filtered.withPictures, `${filtered.pictureKiB} KiB`))
    console.log(row('(d) the grid of screenshots to the first cards', gridView.rows))
    console.log(row('(d) … with the screenshots in view loaded', gridView.withPictures, `${gridView.pictureKiB} KiB`))
    console.log(row('(c) bare Fastify static 40-row table (same browser)', bareTimes))
    console.log(row('(e) GET /v1/screens?limit=500&count=1 from Node (the request behind (a))', apiTimes, `${f1(apiBytes / 1024)} KiB of JSON`))
    console.log(`| ratio (a)/(c) | ${f1(pct(list.rows, 50) / pct(bareTimes, 50))}× | | |`)
    console.log(
      `| ${S} event streams: cloud RSS ${f1(rssBefore / 1048576)} → ${f1(rssAfter / 1048576)} MiB (${f1((rssAfter - rssBefore) / S / 1024)} KiB each); emergency.started on all of them after | ${f1(pct(arrivals, 50))} ms (median stream) | ${f1(arrivals[arrivals.length - 1]!)} ms (last) | |`,
    )
  } finally {
    await browser.close().catch(() => {})
    killAll()
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    killAll()
    process.exit(1)
  },
)
