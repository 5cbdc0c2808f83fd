// Reach receipts of an emergency at fleet size (not a test): the app on a file SQLite database
// (or PostgreSQL with --database-url) with N screens inserted directly, online, with their
// panels reporting on (pairing N screens through the API is what cast-fanout.ts does; here
// the receipts' own work is measured), the real content library (one PNG uploaded through the
// API). An emergency to every screen is started over HTTP and published; then
//   (a) GET /v1/emergencies/<id>/screens?limit=100, the first page, R times over HTTP;
//   (b) every screen reports it playing, through the same listener the device link calls
//       for each stored report (the MQTT decoding before it is not timed), and the time from
//       the last report to `emergency.reach` in the events outbox.
// Beside them, a bare Fastify route over HTTP (bench/lib/bare-fastify.ts, its own process).
//   pnpm exec tsx bench/reach.ts [N=10000] [--rounds=20] [--database-url=postgres://…]
import { join } from 'node:path'
import { buildApp, servicesOf } from '../cloud/src/app.js'
import { testConfig } from '../cloud/src/config.js'
import { PostgresDatabase } from '../cloud/src/platform/db/PostgresDatabase.js'
import { screenRow } from '../cloud/test/fixtures/screenRows.js'
import { databaseUrlArg, engineLabel, freshSchema } from './lib/engine.js'
import { call, f1, killAll, loadAvg, now, pct, sleep, tempDir, uploadImage, startBareFastify } from './lib/harness.js'

async function main(): Promise<void> {
  const databaseUrl = databaseUrlArg()
  const args = process.argv.slice(2)
  const N = Number(args.find((a) => /^\d+$/.test(a)) ?? 10_000)
  const R = Number(args.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 20)
  const dir = tempDir('svc-bench-reach-')
  const pgSchema = databaseUrl ? await freshSchema(databaseUrl) : null
  const db = pgSchema ? await PostgresDatabase.open(databaseUrl!, { busyTimeoutMs: 5000, schema: pgSchema.schema }) : undefined
  try {
    const { port: bport } = await startBareFastify() // stopped by killAll()

    const app = await buildApp(
      testConfig({ dataDir: dir, dbFile: join(dir, 'svc.sqlite'), rateLimitPerMinute: 100_000_000, mediaProcessing: 'background' }),
      db ? { db } : {},
    )
    await app.ready()
    const url = await app.listen({ host: '127.0.0.1', port: 0 })
    const s = servicesOf(app)
    const ws = await s.workspaces.create('Bench', 'us')
    const { secret } = await s.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')
    const at = new Date().toISOString()
    const ids: string[] = []
    for (let i = 0; i < N; i += 500) {
      const rows = Array.from({ length: Math.min(500, N - i) }, (_, j) =>
        screenRow(`scr_bench${String(i + j).padStart(6, '0')}`, ws.id, at, {
          name: `S${i + j}`,
          status: 'online',
          status_since: at,
          reported: JSON.stringify({ version: 0, playing: { source: 'none', contentKind: null, contentId: null }, panel: { power: 'on', at }, at }),
          reported_at: at,
        }),
      )
      ids.push(...rows.map((r) => r.id))
      await s.db.kysely.insertInto('screens').values(rows).execute()
    }
    const mediaId = await uploadImage(url, secret)
    console.log(`N = ${N}, ${engineLabel(databaseUrl)}; load average ${await loadAvg()}`)
    const auth = { authorization: `Bearer ${secret}` }
    const started = await call(`${url}/v1/emergencies`, { method: 'POST', headers: auth, body: { contentKind: 'media', contentId: mediaId, scopeKind: 'all' } })
    if (started.status !== 201) throw new Error(`emergency: ${started.status} ${started.text}`)
    const emergencyId = started.body.data.id as string
    await s.desiredPublisher.idle()

    // (a) the first page of receipts
    const page = async () => {
      const t0 = now()
      const r = await call(`${url}/v1/emergencies/${emergencyId}/screens?limit=100`, { headers: auth })
      if (r.status !== 200 || r.body.data.length !== 100) throw new Error(`receipts: ${r.status} ${r.text.slice(0, 200)}`)
      return now() - t0
    }
    for (let i = 0; i < 5; i++) await page()
    const pages: number[] = []
    for (let i = 0; i < R; i++) pages.push(await page())
    const bareTimes: number[] = []
    for (let i = 0; i < R; i++) {
      const t0 = now()
      await call(`http://127.0.0.1:${bport}/`)
      bareTimes.push(now() - t0)
    }

    // (b) every screen reports it playing; the reach event follows the last report
    const versions = new Map(
      (await s.db.kysely.selectFrom('screens').select(['id', 'desired_version']).execute()).map((r) => [r.id, Number(r.desired_version)]),
    )
    let last = 0
    for (let i = 0; i < ids.length; i += 500) {
      for (const id of ids.slice(i, i + 500)) {
        s.takeoverDelivery.reported({
          screenId: id,
          reported: { version: versions.get(id) ?? 0, playing: { source: 'emergency', contentKind: 'media', contentId: mediaId, emergencyId }, at },
        })
      }
      last = now()
      await sleep(0) // reports arrive over time, a burst per tick
    }
    let reachMs = Number.NaN
    for (;;) {
      const hit = await s.db.kysely.selectFrom('events_outbox').select('data').where('event', '=', 'emergency.reach').executeTakeFirst()
      if (hit) {
        reachMs = now() - last
        console.log(`emergency.reach: ${hit.data}`)
        break
      }
      if (now() - last > 60_000) throw new Error('no emergency.reach within 60 s of the last report')
      await sleep(5)
    }
    await app.close()
    const median = (xs: number[]) =>
      pct(
        [...xs].sort((a, b) => a - b),
        50,
      )
    console.log(`| N = ${N}, ${engineLabel(databaseUrl)} (load average at the end ${await loadAvg()}) | median | p90 |`)
    console.log('| --- | --- | --- |')
    console.log(
      `| GET /v1/emergencies/<id>/screens?limit=100, first page (${R} times) | ${f1(median(pages))} ms | ${f1(
        pct(
          [...pages].sort((a, b) => a - b),
          90,
        ),
      )} ms |`,
    )
    console.log(
      `| bare Fastify GET / (same run) | ${f1(median(bareTimes))} ms | ${f1(
        pct(
          [...bareTimes].sort((a, b) => a - b),
          90,
        ),
      )} ms |`,
    )
    console.log(`| emergency.reach recorded after the last of ${N} reports | ${f1(reachMs)} ms | — |`)
  } finally {
    await db?.close()
    await pgSchema?.drop()
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
