// The console's screens page at fleet size (not a test), in the system Chromium: the cloud as
// `pnpm start` runs it (its CLI, its own process, a SQLite file) with N screens inserted
// straight into its database before it starts (pairing N screens through the API is what
// cast-fanout.ts measures; here the page is timed), one admin signed in through an invite
// link. Timed, R times each after a warm-up, from navigation to the first rows drawn:
//   (a) /console/screens (the first page of 500 and the total);
//   (b) /console/screens?q=…&status=offline (a filtered page);
// beside (c) a bare Fastify route in its own process serving a static page with a 40-row
// table, in the same browser. Then the server-push cost: S live event streams opened on the
// cloud, its RSS before and after, and the time from an emergency's start until every
// stream has its `emergency.started`.
//   pnpm exec tsx bench/console-screens.ts [N=10000] [--rounds=10] [--streams=200]
import { spawn } from 'node:child_process'
import http from 'node:http'
import { join } from 'node:path'
import puppeteer from 'puppeteer-core'
import { openDatabase } from '../cloud/src/platform/db/open.js'
import { migrate } from '../cloud/src/platform/db/migrate.js'
import { testConfig } from '../cloud/src/config.js'
import { screenRow } from '../cloud/test/fixtures/screenRows.js'
import { call, cli, cloudEnv, f1, freePort, killAll, loadAvg, now, pct, rssOf, startCloud, tempDir, track, uploadImage } from './lib/harness.js'

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
  const env = cloudEnv(dir, httpPort, mqttPort, { SVC_RATE_LIMIT: '100000000', SVC_EVENT_STREAMS_PER_WORKSPACE: String(S + 20) })
  const ws = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench', '--email', 'ops@example.com'])) as {
    workspaceId: string
    apiKey: string
    inviteUrl: string
  }
  const db = await openDatabase(testConfig({ dataDir: dir, dbFile }))
  const at = new Date().toISOString()
  for (let i = 0; i < N; i += 500)
    await db.kysely
      .insertInto('screens')
      .values(
        Array.from({ length: Math.min(500, N - i) }, (_, j) =>
          screenRow(`scr_bench${String(i + j).padStart(6, '0')}`, ws.workspaceId, at, { name: `Screen ${i + j}` }),
        ),
      )
      .execute()
  await db.close()

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
    const timeTo = async (url: string, selector: string) => {
      const tab = await browser.newPage()
      await tab.setViewport({ width: 1280, height: 800 })
      const t0 = now()
      await tab.goto(url, { waitUntil: 'domcontentloaded' })
      await tab.waitForSelector(selector)
      const ms = now() - t0
      await tab.close()
      return ms
    }
    const series = async (url: string, selector: string) => {
      await timeTo(url, selector)
      const xs: number[] = []
      for (let i = 0; i < R; i++) xs.push(await timeTo(url, selector))
      return xs.sort((a, b) => a - b)
    }
    const firstRow = 'tbody tr:not(.spacer) a'
    const list = await series(`${base}/console/screens`, firstRow)
    const filtered = await series(`${base}/console/screens?q=${encodeURIComponent('Screen 99')}&status=offline`, firstRow)
    const bareTimes = await series(`http://127.0.0.1:${bare.port}/`, 'tbody tr a')

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

    const row = (name: string, xs: number[]) => `| ${name} | ${f1(pct(xs, 50))} ms | ${f1(pct(xs, 90))} ms |`
    console.log(`| ${N} screens, Chromium, ${R} rounds (load average ${await loadAvg()}) | median | p90 |`)
    console.log('| --- | --- | --- |')
    console.log(row('(a) /console/screens to the first rows', list))
    console.log(row('(b) a filtered page to the first rows', filtered))
    console.log(row('(c) bare Fastify static 40-row table (same browser)', bareTimes))
    console.log(`| ratio (a)/(c) | ${f1(pct(list, 50) / pct(bareTimes, 50))}× | |`)
    console.log(
      `| ${S} event streams: cloud RSS ${f1(rssBefore / 1048576)} → ${f1(rssAfter / 1048576)} MiB (${f1((rssAfter - rssBefore) / S / 1024)} KiB each); emergency.started on all of them after | ${f1(pct(arrivals, 50))} ms (median stream) | ${f1(arrivals[arrivals.length - 1]!)} ms (last) |`,
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
