// Proof-of-display summary at volume (not a test): the app on PostgreSQL (--database-url or
// BENCH_DATABASE_URL; required) with S screens in 10 locations and P plays over D days stored
// in `play_log` by INSERT … SELECT, a day at a time (pairing and publishing 10 million plays
// through MQTT would take hours and measure the ingest, not the summary); the daily and hourly
// totals are then built by the upgrade's own statements (migration 530), as an upgraded
// database has them. Each
// screen plays K of 200 playlists a day (its dayparts; default 4), 10–60 s each, the panel on
// for nine plays in ten.
// Timed over HTTP, R times each after two warm-ups:
//   (a) the whole period, midnight to midnight (daily totals only);
//   (b) the same minus 7 h 13 min 27 s at the start and 5 h 41 min 10 s at the end (whole days,
//       whole hours and the plays of two partial hours);
//   (c) (b) for one location;  (d) (b) for one playlist.
// Beside them, a bare Fastify route over HTTP (bench/lib/bare-fastify.ts, its own process).
//   pnpm exec tsx bench/playlog-summary.ts --database-url=postgres://… [--plays=10000000] [--screens=1000] [--days=30] [--contents-per-day=4] [--rounds=10]
// --keep leaves the seeded schema in place (its name is printed); --schema=NAME measures on
// such a schema again without seeding (to compare query plans: seeding takes minutes).
import { join } from 'node:path'
import { buildApp, servicesOf } from '../cloud/src/app.js'
import { testConfig } from '../cloud/src/config.js'
import { PostgresDatabase } from '../cloud/src/platform/db/PostgresDatabase.js'
import totals from '../cloud/src/platform/db/migrations/0530-play-log-totals.js'
import { screenRow } from '../cloud/test/fixtures/screenRows.js'
import { databaseUrlArg, freshSchema } from './lib/engine.js'
import { call, f1, killAll, loadAvg, now, pct, startBareFastify, tempDir } from './lib/harness.js'

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback)

async function main(): Promise<void> {
  const databaseUrl = databaseUrlArg()
  if (!databaseUrl) throw new Error('this bench runs on PostgreSQL: pass --database-url=postgres://… or set BENCH_DATABASE_URL')
  const P = arg('plays', 10_000_000)
  const S = arg('screens', 1000)
  const D = arg('days', 30)
  const R = arg('rounds', 10)
  const K = arg('contents-per-day', 4)
  const perScreen = Math.floor(P / S)
  const dir = tempDir('svc-bench-playlog-')
  const reuse = process.argv.find((a) => a.startsWith('--schema='))?.slice(9)
  const keep = process.argv.includes('--keep')
  const pgSchema = reuse ? { schema: reuse, drop: async () => {} } : await freshSchema(databaseUrl)
  const db = await PostgresDatabase.open(databaseUrl, { busyTimeoutMs: 600_000, schema: pgSchema.schema })
  try {
    const { port: bport } = await startBareFastify() // stopped by killAll()
    const app = await buildApp(testConfig({ dataDir: dir, dbFile: join(dir, 'unused.sqlite'), rateLimitPerMinute: 100_000_000 }), { db })
    await app.ready()
    const url = await app.listen({ host: '127.0.0.1', port: 0 })
    const s = servicesOf(app)
    const ws = reuse
      ? await s.db.kysely.selectFrom('workspaces').selectAll().where('name', '=', 'Bench').executeTakeFirstOrThrow()
      : await s.workspaces.create('Bench', 'us')
    const { secret } = await s.apiKeys.createRoot(ws.id, 'us', 'Owner', 'all')
    const auth = { authorization: `Bearer ${secret}` }
    const nodes: string[] = []
    const start = Date.UTC(2026, 8, 1)
    if (reuse) nodes.push(...(await s.db.kysely.selectFrom('nodes').select('id').where('workspace_id', '=', ws.id).orderBy('name').execute()).map((r) => r.id))
    else await seed()

    async function seed(): Promise<void> {
      for (let i = 0; i < 10; i++) {
        const r = await call(`${url}/v1/nodes`, { method: 'POST', headers: auth, body: { name: `Store ${i}`, kind: 'location' } })
        if (r.status !== 201) throw new Error(`node: ${r.status} ${r.text}`)
        nodes.push(r.body.data.id as string)
      }
      const at = new Date(start).toISOString()
      for (let i = 0; i < S; i += 500) {
        const rows = Array.from({ length: Math.min(500, S - i) }, (_, j) =>
          screenRow(`scr_bench${String(i + j).padStart(6, '0')}`, ws.id, at, { name: `S${i + j}`, node_id: nodes[(i + j) % 10]! }),
        )
        await s.db.kysely.insertInto('screens').values(rows).execute()
      }
      // P plays: screen sc's play n starts n × (D days / perScreen) after the start; stored a
      // day at a time, every screen's plays of that day together, as reports arrive.
      const gap = (D * 86_400) / perScreen
      const t0 = now()
      for (let d = 0; d < D; d++) {
        const lo = Math.floor((d * perScreen) / D)
        const hi = Math.floor(((d + 1) * perScreen) / D) - 1
        await s.db.run(
          `INSERT INTO play_log (id, workspace_id, screen_id, source, content_kind, content_id, cast_id, emergency_id, item_kind, item_id, zone, started_at, ended_at, duration_ms, received_at, panel_power)
           SELECT 'play_' || sc || '_' || n, '${ws.id}', 'scr_bench' || lpad(sc::text, 6, '0'), 'assignment', 'playlist',
             'pl_' || lpad(((sc * 7 + (n % ${K}) + ${K} * floor(n * ${gap} / 86400)::int) % 200)::text, 4, '0'),
             NULL, NULL, 'media', 'med_' || (n % 5), NULL,
             to_char(st, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             to_char(st + make_interval(secs => 10 + (n * 37) % 51), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             (10 + (n * 37) % 51) * 1000, '${at}', CASE WHEN (sc + n) % 10 = 0 THEN 'off' ELSE 'on' END
           FROM generate_series(${lo}, ${hi}) n, generate_series(0, ${S - 1}) sc,
             LATERAL (SELECT timestamp '${at.slice(0, 10)} 00:00:00' + make_interval(secs => n * ${gap}) AS st) x
           ORDER BY n`,
        )
        process.stdout.write(`\rplays stored: ${((hi + 1) * S).toLocaleString('en')} (${f1((now() - t0) / 1000)} s)`)
      }
      process.stdout.write('\n')
      const t1 = now()
      for (const fill of totals.statements.filter((q) => q.startsWith('INSERT'))) await s.db.run(fill)
      await s.db.run('VACUUM ANALYZE play_log')
      await s.db.run('VACUUM ANALYZE play_log_daily')
      await s.db.run('VACUUM ANALYZE play_log_hourly')
      console.log(`daily and hourly totals filled in ${f1((now() - t1) / 1000)} s`)
    }
    const counts = await s.db.get<{ plays: string; daily: string; hourly: string }>(
      'SELECT (SELECT count(*) FROM play_log) AS plays, (SELECT count(*) FROM play_log_daily) AS daily, (SELECT count(*) FROM play_log_hourly) AS hourly',
    )
    console.log(
      `${Number(counts!.plays).toLocaleString('en')} plays, ${Number(counts!.daily).toLocaleString('en')} daily and ${Number(counts!.hourly).toLocaleString('en')} hourly totals`,
    )

    const iso = (ms: number) => new Date(ms).toISOString()
    const whole = `from=${iso(start)}&to=${iso(start + D * 86_400_000)}`
    // Neither end on an hour: whole days, whole hours and single plays are all read.
    const partial = `from=${iso(start + 7 * 3_600_000 + 13 * 60_000 + 27_000)}&to=${iso(start + D * 86_400_000 - 5 * 3_600_000 - 41 * 60_000 - 10_000)}`
    const cases: [string, string][] = [
      ['(a) whole days', whole],
      ['(b) partial first and last day', partial],
      ['(c) (b), one location', `${partial}&nodeId=${nodes[3]}`],
      ['(d) (b), one playlist', `${partial}&contentKind=playlist&contentId=pl_0042`],
    ]
    const median = (xs: number[]) =>
      pct(
        [...xs].sort((a, b) => a - b),
        50,
      )
    const lines: string[] = []
    for (const [name, q] of cases) {
      const once = async () => {
        const t = now()
        const r = await call(`${url}/v1/play-log/summary?${q}&limit=100`, { headers: auth })
        if (r.status !== 200 || !r.body.data.length) throw new Error(`summary: ${r.status} ${r.text.slice(0, 300)}`)
        return { ms: now() - t, body: r.body }
      }
      await once()
      const first = await once()
      const times: number[] = []
      for (let i = 0; i < R; i++) times.push((await once()).ms)
      const plays = first.body.data.reduce((n: number, r: { plays: number }) => n + r.plays, 0)
      lines.push(
        `| ${name} | ${f1(median(times))} ms | ${f1(
          pct(
            [...times].sort((a, b) => a - b),
            90,
          ),
        )} ms | ${first.body.data.length} contents, ${plays.toLocaleString('en')} plays on the page |`,
      )
    }
    const bare: number[] = []
    for (let i = 0; i < 50; i++) {
      const t = now()
      await call(`http://127.0.0.1:${bport}/`)
      bare.push(now() - t)
    }
    await app.close()
    console.log(
      `| ${P.toLocaleString('en')} plays, ${S} screens, ${D} days, ${K} playlists a screen a day, PostgreSQL (load average ${await loadAvg()}) | median | p90 | answer |`,
    )
    console.log('| --- | --- | --- | --- |')
    for (const l of lines) console.log(l)
    console.log(
      `| bare Fastify GET / (same run) | ${f1(median(bare))} ms | ${f1(
        pct(
          [...bare].sort((a, b) => a - b),
          90,
        ),
      )} ms | |`,
    )
  } finally {
    killAll()
    await db.close().catch(() => {})
    if (keep || reuse) console.log(`schema kept: --schema=${pgSchema.schema}`)
    else await pgSchema.drop()
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
