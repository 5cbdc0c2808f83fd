// The availability report at volume (not a test): the app on a SQLite file (or PostgreSQL with
// --database-url / BENCH_DATABASE_URL) with S screens (default 10,000) in 100 locations, half
// of the locations with operating hours (weekdays 07:00–21:00, their screens in four time
// zones), and D days (default 90) of history: per screen O outages (default 20) of 5 minutes
// to 8 hours at random moments (its presence stretches between them) and a panel switched off
// and on around a third of them. Rows are inserted straight into the tables, a batch at a time
// (pairing 10,000 devices and replaying 200,000 connections would time the device link).
// Timed over HTTP, R rounds (default 5) after a warm-up:
//   (a) the whole workspace, a row per screen, over the D days;
//   (b) the same, a row per location;  (c) one location (its screens only);
//   (d) the CSV of the whole workspace over a year (366 days), read as a stream: time, size
//       and the process' heap above its level before: with --expose-gc its LIVE heap, sampled
//       after a forced GC every 50 ms (and once after the stream); without, the raw peak
//       of heapUsed sampled every 20 ms (garbage included);
// then the hourly roll-up is run and (a) is timed again. --csv-only: (d) alone;
// --csv-days=N: (d) over N days instead of 366; --own-hours=K: every K-th screen has hours of
// its own (each a little different), besides its location's.
//   pnpm exec tsx bench/reports.ts [--screens=10000] [--days=90] [--outages=20] [--rounds=5] [--database-url=postgres://…]
//   node --expose-gc --import tsx bench/reports.ts --csv-only --screens=20000 [--csv-days=90]
import http from 'node:http'
import { join } from 'node:path'
import { buildApp, servicesOf } from '../cloud/src/app.js'
import { testConfig } from '../cloud/src/config.js'
import { ManualClock } from '../cloud/src/platform/clock.js'
import { PostgresDatabase } from '../cloud/src/platform/db/PostgresDatabase.js'
import { screenRow } from '../cloud/test/fixtures/screenRows.js'
import { databaseUrlArg, freshSchema } from './lib/engine.js'
import { call, f1, loadAvg, now, pct, tempDir } from './lib/harness.js'
import { seededRandom } from '../shared/src/testing/random.js'

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback)
const MIN = 60_000
const DAY = 86_400_000
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata']

async function main(): Promise<void> {
  const S = arg('screens', 10_000)
  const D = arg('days', 90)
  const O = arg('outages', 20)
  const R = arg('rounds', 5)
  const dir = tempDir('svc-bench-reports-')
  const databaseUrl = databaseUrlArg()
  const pg = databaseUrl ? await freshSchema(databaseUrl) : null
  const db = databaseUrl && pg ? await PostgresDatabase.open(databaseUrl, { busyTimeoutMs: 600_000, schema: pg.schema }) : undefined
  const end = Date.UTC(2026, 10, 30) // the history ends (and "now" is) 2026-11-30 00:00 UTC
  const start = end - D * DAY
  const app = await buildApp(testConfig({ dataDir: dir, dbFile: join(dir, 'bench.sqlite'), rateLimitPerMinute: 100_000_000 }), {
    ...(db ? { db } : {}),
    clock: new ManualClock(new Date(end).toISOString()),
  })
  try {
    await app.ready()
    const url = await app.listen({ host: '127.0.0.1', port: 0 })
    const s = servicesOf(app)
    const ws = await s.workspaces.create('Bench', 'us')
    const { secret } = await s.apiKeys.createRoot(ws.id, 'us', 'Owner', 'all')
    const auth = { authorization: `Bearer ${secret}` }
    const nodes: string[] = []
    for (let i = 0; i < 100; i++) {
      const r = await call(`${url}/v1/nodes`, { method: 'POST', headers: auth, body: { name: `Store ${String(i).padStart(3, '0')}`, kind: 'location' } })
      if (r.status !== 201) throw new Error(`node: ${r.status} ${r.text}`)
      nodes.push(r.body.data.id as string)
      if (i % 2 === 0) {
        const h = await call(`${url}/v1/nodes/${r.body.data.id}/operating-hours`, {
          method: 'PUT',
          headers: auth,
          body: { weekly: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], on: '07:00', off: '21:00' }], exceptions: [] },
        })
        if (h.status !== 200) throw new Error(`hours: ${h.status} ${h.text}`)
      }
    }
    const t0 = now()
    const rnd = seededRandom(49)
    const created = new Date(start - DAY).toISOString()
    let presenceRows = 0
    let panelRows = 0
    for (let i = 0; i < S; i += 500) {
      const screens: ReturnType<typeof screenRow>[] = []
      const presence: { workspace_id: string; screen_id: string; started_at: string; ended_at: string | null }[] = []
      const panel: ((typeof presence)[number] & { power: string; playing: number; showing: number })[] = []
      for (let j = i; j < Math.min(S, i + 500); j++) {
        const id = `scr_bench${String(j).padStart(6, '0')}`
        screens.push(screenRow(id, ws.id, created, { name: `Screen ${j}`, node_id: nodes[j % 100]!, timezone: ZONES[j % 4]! }))
        // O outages at random moments, 5 min to 8 h each, not overlapping.
        const cuts: [number, number][] = []
        for (let o = 0; o < O; o++) {
          const at = start + Math.floor(rnd() * (D * DAY - 9 * 3_600_000))
          cuts.push([at, at + (5 + Math.floor(rnd() * 475)) * MIN])
        }
        cuts.sort((a, b) => a[0] - b[0])
        let on = start - DAY
        const offs: [number, number][] = []
        for (const [a, b] of cuts) {
          if (a <= on) continue
          presence.push({ workspace_id: ws.id, screen_id: id, started_at: new Date(on).toISOString(), ended_at: new Date(a).toISOString() })
          offs.push([a, b])
          on = b
        }
        presence.push({ workspace_id: ws.id, screen_id: id, started_at: new Date(on).toISOString(), ended_at: null })
        // The panel: showing throughout but read back off for an hour around every third outage.
        let p = start - DAY
        for (const [a] of offs.filter((_, x) => x % 3 === 0)) {
          const off = a - 30 * MIN
          if (off <= p) continue
          panel.push({
            workspace_id: ws.id,
            screen_id: id,
            started_at: new Date(p).toISOString(),
            ended_at: new Date(off).toISOString(),
            power: 'on',
            playing: 1,
            showing: 1,
          })
          panel.push({
            workspace_id: ws.id,
            screen_id: id,
            started_at: new Date(off).toISOString(),
            ended_at: new Date(off + 60 * MIN).toISOString(),
            power: 'off',
            playing: 1,
            showing: 0,
          })
          p = off + 60 * MIN
        }
        panel.push({ workspace_id: ws.id, screen_id: id, started_at: new Date(p).toISOString(), ended_at: null, power: 'on', playing: 1, showing: 1 })
      }
      await s.db.transaction(async (tx) => {
        await tx.kysely.insertInto('screens').values(screens).execute()
        for (let x = 0; x < presence.length; x += 500)
          await tx.kysely
            .insertInto('presence_intervals')
            .values(presence.slice(x, x + 500))
            .execute()
        for (let x = 0; x < panel.length; x += 500)
          await tx.kysely
            .insertInto('panel_intervals')
            .values(panel.slice(x, x + 500))
            .execute()
      })
      presenceRows += presence.length
      panelRows += panel.length
      process.stdout.write(`\rscreens seeded: ${Math.min(S, i + 500).toLocaleString('en')}`)
    }
    process.stdout.write('\n')
    // --own-hours=K: every K-th screen has its own operating hours, each different up to 1,200
    // of them (on 06:00–09:59 by the minute, off 18:00–22:00): hours read per screen.
    const K = arg('own-hours', 0)
    if (K > 0) {
      const own: { workspace_id: string; owner_kind: string; owner_id: string; hours: string; updated_at: string }[] = []
      for (let j = 0; j < S; j += K) {
        const m = j / K
        const on = `${String(6 + (Math.floor(m / 60) % 4)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`
        const hours = { weekly: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], on, off: `${18 + (Math.floor(m / 240) % 5)}:00` }], exceptions: [] }
        own.push({
          workspace_id: ws.id,
          owner_kind: 'screen',
          owner_id: `scr_bench${String(j).padStart(6, '0')}`,
          hours: JSON.stringify(hours),
          updated_at: created,
        })
      }
      for (let x = 0; x < own.length; x += 500)
        await s.db.kysely
          .insertInto('operating_hours')
          .values(own.slice(x, x + 500))
          .execute()
      console.log(`${own.length.toLocaleString('en')} screens with their own operating hours`)
    }
    if (databaseUrl) for (const tb of ['screens', 'presence_intervals', 'panel_intervals']) await s.db.run(`VACUUM ANALYZE ${tb}`)
    else await s.db.run('ANALYZE')
    console.log(`${presenceRows.toLocaleString('en')} presence and ${panelRows.toLocaleString('en')} panel stretches seeded in ${f1((now() - t0) / 1000)} s`)

    const iso = (ms: number) => new Date(ms).toISOString()
    const window = `from=${iso(start)}&to=${iso(end)}`
    const median = (xs: number[]) =>
      pct(
        [...xs].sort((a, b) => a - b),
        50,
      )
    const timeIt = async (q: string, check: (body: any) => string) => {
      const once = async () => {
        const t = now()
        const r = await call(`${url}/v1/reports/availability?${q}`, { headers: auth })
        if (r.status !== 200) throw new Error(`report: ${r.status} ${r.text.slice(0, 300)}`)
        return { ms: now() - t, body: r.body }
      }
      const first = await once()
      const times: number[] = []
      for (let i = 0; i < R; i++) times.push((await once()).ms)
      const sorted = [...times].sort((a, b) => a - b)
      return `${f1(median(times))} ms | ${f1(sorted[sorted.length - 1]!)} ms | ${check(first.body.data)}`
    }
    const total = (d: any) =>
      `${d.rows.length.toLocaleString('en')} rows; availability ${(d.total.availability * 100).toFixed(2)} %, display ${(d.total.displayAvailability * 100).toFixed(2)} %`
    const lines: string[] = []
    if (!process.argv.includes('--csv-only')) {
      lines.push(`| (a) whole workspace, per screen, ${D} days | ${await timeIt(window, total)} |`)
      lines.push(`| (b) whole workspace, per location | ${await timeIt(`${window}&groupBy=node`, total)} |`)
      lines.push(`| (c) one location | ${await timeIt(`${window}&nodeId=${nodes[7]}`, total)} |`)
    }

    // (d) A year as CSV, streamed: the heap sampled while it is read. With --expose-gc the
    // samples are LIVE memory: each one is taken after a forced full collection (garbage not
    // yet collected is not memory the stream holds); without it, the raw peak of heapUsed.
    const gc = global.gc
    const csvDays = arg('csv-days', 366)
    const yearQ = `from=${iso(end - csvDays * DAY)}&to=${iso(end)}&format=csv`
    gc?.()
    const before = process.memoryUsage().heapUsed
    let peak = before
    let samples = 0
    const sampler = setInterval(
      () => {
        gc?.()
        samples++
        peak = Math.max(peak, process.memoryUsage().heapUsed)
      },
      gc ? 50 : 20,
    )
    const t1 = now()
    const { bytes, lines: csvLines } = await new Promise<{ bytes: number; lines: number }>((resolve, reject) => {
      const u = new URL(`${url}/v1/reports/availability?${yearQ}`)
      http
        .get({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers: auth }, (res) => {
          let n = 0
          let l = 0
          res.on('data', (c: Buffer) => {
            n += c.length
            for (const b of c) if (b === 10) l++
          })
          res.on('end', () => resolve({ bytes: n, lines: l }))
          res.on('error', reject)
        })
        .on('error', reject)
    })
    const csvMs = now() - t1
    clearInterval(sampler)
    gc?.()
    const after = process.memoryUsage().heapUsed
    const mb = (n: number) => (n / 1e6).toFixed(1)
    lines.push(
      `| (d) CSV, whole workspace, ${csvDays} days, streamed | ${f1(csvMs)} ms | | ${csvLines.toLocaleString('en')} lines, ${(bytes / 1e6).toFixed(1)} MB; ${
        gc
          ? `live heap (after a forced GC, ${samples} samples) at most ${mb(peak - before)} MB above its level before, ${mb(after - before)} MB after`
          : `peak heap ${mb(peak - before)} MB above its level before (garbage included: run with --expose-gc for live memory)`
      } |`,
    )
    if (process.argv.includes('--csv-only')) {
      console.log(`| ${S.toLocaleString('en')} screens × ${D} days × ${O} outages (load average ${await loadAvg()}) | | | |`)
      for (const l of lines) console.log(l)
      return
    }

    const t2 = now()
    const looked = await s.availabilityRollup.rollAll()
    const rolled = await s.db.get<{ n: number | string }>('SELECT count(*) AS n FROM availability_hours')
    lines.push(
      `| hourly roll-up run | ${f1(now() - t2)} ms | | ${looked.toLocaleString('en')} closed stretches looked at, ${Number(rolled!.n).toLocaleString('en')} hourly rows |`,
    )
    lines.push(`| (a) again, with the roll-ups | ${await timeIt(window, total)} |`)

    console.log(
      `| ${S.toLocaleString('en')} screens × ${D} days × ${O} outages, ${databaseUrl ? 'PostgreSQL' : 'SQLite'} (load average ${await loadAvg()}) | median | slowest | answer |`,
    )
    console.log('| --- | --- | --- | --- |')
    for (const l of lines) console.log(l)
  } finally {
    await app.close()
    if (pg) await pg.drop()
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  },
)
