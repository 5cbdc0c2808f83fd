// API hot paths against a bare Fastify (not a test), each server in its own process and
// the load generator (autocannon's CLI) in a third:
//   pnpm exec tsx bench/api-latency.ts [--connections=50] [--duration=10] [--screens=120] [--database-url=postgres://…]
//
// (a) bench/lib/bare-fastify.ts: a bare Fastify route answering {hello: 'world'};
// (b) the product started as `pnpm start` starts it (its CLI, file SQLite database, or with
//     --database-url (or BENCH_DATABASE_URL) a fresh PostgreSQL database made next to the one
//     named, dropped at the end (the role needs CREATEDB); default log level, written to a file), with its rate limit raised by its setting
//     (SVC_RATE_LIMIT), the real content library, S screens paired through the API as
//     devices pair; routes GET /v1/me (the owner key), GET /v1/screens?limit=100 (the owner
//     key), GET /v1/status (no credential); then, started again on a fresh data folder and
//     database with SVC_SCREEN_LIST_KEEP_MS=0, the list with no page kept (every answer read
//     from the database, as while the listed screens keep changing); then GET /v1/me (a read)
//     and POST /v1/playlists (each write recorded in the audit log) in a third run, and the
//     same two in a fourth with SVC_AUDIT=off: the audit log's cost as the ratio on ÷ off of
//     the median and of the CPU per request, for a write and for a read, in the same bench
//     run, each in a cloud that has served the same routes before it.
// Each route is loaded once the cloud has compiled its route schemas in the background (a
// start-up cost of about 2 s of CPU that would otherwise land in the first route's measured
// run: its log's "route schemas compiled"), for the given duration with the given connections
// after a 2-second warm-up; the report is req/s (autocannon's average) and the ratio to the bare route of
// the same run. Every child process is killed at the end, also on failure.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { databaseUrlArg, engineLabel, freshDatabase } from './lib/engine.js'
import { ROOT, cli, cloudEnv, expect, call, freePort, killAll, loadAvg, pairMany, startCloud, stop, tempDir, track, startBareFastify } from './lib/harness.js'

const databaseUrl = databaseUrlArg()
const arg = (name: string, def: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def)
const C = arg('connections', 50)
const D = arg('duration', 10)
const S = arg('screens', 120)

interface Result {
  /** Machine CPU per request in µs: the server process (all its threads: SQLite runs in libuv's pool) plus, on PostgreSQL, the bench database's backends. */
  cpuUs?: { server: number; db: number }
  rps: number
  p50: number
  p99: number
  total: number
  non2xx: number
  errors: number
}

/** autocannon's CLI in its own process; answers its JSON summary. */
async function cannon(url: string, headers: Record<string, string>, duration: number, body?: string): Promise<Result> {
  const args = [join(ROOT, 'node_modules', 'autocannon', 'autocannon.js'), '-c', String(C), '-d', String(duration), '-j']
  if (body !== undefined) args.push('-m', 'POST', '-b', body)
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`)
  args.push(url)
  const c = track(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] }))
  let out = ''
  c.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  const code = await new Promise<number | null>((r) => c.once('exit', r))
  if (code !== 0) throw new Error(`autocannon exited ${code}`)
  const j = JSON.parse(out.trim().split('\n').pop()!) as {
    requests: { average: number; total: number }
    latency: { p50: number; p99: number }
    non2xx: number
    errors: number
  }
  return { rps: j.requests.average, p50: j.latency.p50, p99: j.latency.p99, total: j.requests.total, non2xx: j.non2xx, errors: j.errors }
}

const TICK_US = 1e6 / 100 // USER_HZ is 100 on Linux
/** user + system CPU of a process (all threads) in µs, from /proc (0 if it is gone). */
function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(f[11]) + Number(f[12])) * TICK_US
  } catch {
    return 0
  }
}
/** The PostgreSQL backends serving database `name`, found by their process title (same machine). */
function backendsOf(name: string): number[] {
  const out: number[] = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8')
      // "postgres: [<cluster>: ]<user> <database> <host>(<port>) <state>"
      if (/^postgres: (?:\S+: )?\S+ (\S+) /.exec(cmd)?.[1] === name) out.push(Number(d))
    } catch {
      // gone
    }
  }
  return out
}
/**
 * CPU µs of the server (and the database's backends) spent while `run` runs, per request it
 * made. Backends are listed at both ends: one started during the run counts in full, one
 * that ended during the run is lost (the pool keeps its connections while it is busy).
 */
async function measured(serverPid: number, dbName: string | null, run: () => Promise<Result>): Promise<Result> {
  const db0 = new Map((dbName ? backendsOf(dbName) : []).map((p) => [p, cpuOf(p)]))
  const s0 = cpuOf(serverPid)
  const r = await run()
  const s1 = cpuOf(serverPid)
  let db = 0
  for (const p of dbName ? backendsOf(dbName) : []) db += Math.max(0, cpuOf(p) - (db0.get(p) ?? 0))
  return { ...r, cpuUs: { server: (s1 - s0) / r.total, db: db / r.total } }
}

/** Waits for the cloud's log line saying its background compile of the route schemas ended. */
async function schemasCompiled(logFile: string): Promise<void> {
  const deadline = Date.now() + 300_000
  while (!(existsSync(logFile) && readFileSync(logFile, 'utf8').includes('"msg":"route schemas compiled"'))) {
    if (Date.now() > deadline) throw new Error(`the cloud did not log "route schemas compiled" within 300 s; see ${logFile}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** A write: a playlist created per request (recorded in the audit log unless SVC_AUDIT=off). */
const PLAYLIST_BODY = JSON.stringify({ name: 'Bench playlist' })

/**
 * Starts the product with `extra` settings, pairs S screens, loads its routes (`list`: only
 * the list; `write`: only POST /v1/playlists); answers a row per route.
 */
async function product(dir: string, extra: Record<string, string>, only: 'all' | 'list' | 'write'): Promise<{ name: string; r: Result }[]> {
  mkdirSync(dir, { recursive: true })
  const pgdb = databaseUrl ? await freshDatabase(databaseUrl) : null
  try {
    // BENCH_CPU_PROF=<dir>: the cloud's CPU is profiled during each route's measured run, one file each (bench/lib/cpu-prof.mjs).
    const profDir = process.env.BENCH_CPU_PROF
    const prof: Record<string, string> = profDir ? { NODE_OPTIONS: `--import ${join(ROOT, 'bench', 'lib', 'cpu-prof.mjs')}`, BENCH_CPU_PROF: profDir } : {}
    const env = cloudEnv(dir, await freePort(), await freePort(), {
      SVC_RATE_LIMIT: '1000000000',
      ...(pgdb ? { SVC_DATABASE_URL: pgdb.url } : {}),
      ...prof,
      ...extra,
    })
    const { apiKey } = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench'])) as { apiKey: string }
    const cloud = await startCloud(env, join(dir, 'cloud.log'))
    await pairMany(cloud.base, apiKey, S, 8)
    await schemasCompiled(join(dir, 'cloud.log'))
    const auth = { authorization: `Bearer ${apiKey}` }
    const listed = expect(await call(`${cloud.base}/v1/screens?limit=100`, { headers: auth }), 200, 'list').body.data as unknown[]
    if (listed.length !== Math.min(100, S)) throw new Error(`the list answered ${listed.length} screens`)
    const list = `GET /v1/screens?limit=100 (${S} screens)`
    const audited = extra.SVC_AUDIT === 'off' ? 'audit log off (SVC_AUDIT=off)' : 'audit log on (each write recorded)'
    const write = { path: '/v1/playlists', headers: { ...auth, 'content-type': 'application/json' }, body: PLAYLIST_BODY }
    const routes: { name: string; path: string; headers: Record<string, string>; body?: string }[] =
      only === 'list'
        ? [{ name: `${list}, no page kept (SVC_SCREEN_LIST_KEEP_MS=0)`, path: '/v1/screens?limit=100', headers: auth }]
        : only === 'write'
          ? [
              { name: `GET /v1/me, ${audited}`, path: '/v1/me', headers: auth },
              { name: `POST /v1/playlists, ${audited}`, ...write },
            ]
          : [
              { name: 'GET /v1/me (authentication only)', path: '/v1/me', headers: auth },
              { name: list, path: '/v1/screens?limit=100', headers: auth },
              { name: 'GET /v1/status (no credential)', path: '/v1/status', headers: {} },
            ]
    // CPU per request (/proc, user + system) is much less moved by the machine's load than requests per second.
    const results: { name: string; r: Result }[] = []
    for (const route of routes) {
      if (route.body === undefined) expect(await call(cloud.base + route.path, { headers: route.headers }), 200, route.name)
      else expect(await call(cloud.base + route.path, { method: 'POST', headers: route.headers, body: JSON.parse(route.body) }), 201, route.name)
      await cannon(cloud.base + route.path, route.headers, 2, route.body)
      if (profDir) cloud.proc.kill('SIGWINCH')
      // The pool's backends are all open after the warm-up (the bench database has no other client).
      const dbName = pgdb ? new URL(pgdb.url).pathname.slice(1) : null
      results.push({ name: route.name, r: await measured(cloud.proc.pid!, dbName, () => cannon(cloud.base + route.path, route.headers, D, route.body)) })
      if (profDir) cloud.proc.kill('SIGWINCH')
    }
    await stop(cloud.proc)
    return results
  } finally {
    await pgdb?.drop().catch((e: unknown) => console.error('could not drop the bench database', e))
  }
}

async function main(): Promise<void> {
  const dir = tempDir('svc-bench-api-')
  try {
    console.log(`connections ${C}, ${D} s per route, ${S} screens, ${engineLabel(databaseUrl)}; load average ${await loadAvg()}`)
    // (a) bare Fastify
    const { proc: bare, port: bport } = await startBareFastify()
    await cannon(`http://127.0.0.1:${bport}/`, {}, 2)
    const hello = await measured(bare.pid!, null, () => cannon(`http://127.0.0.1:${bport}/`, {}, D))
    await stop(bare)

    // (b) the product: the three routes with its defaults, then the list again with no page
    // kept (SVC_SCREEN_LIST_KEEP_MS=0: every answer read from the database, as while the
    // screens keep changing), each on a fresh data folder and database.
    // Then GET /v1/me and POST /v1/playlists in a cloud with the audit log on, and in one with it off.
    const results = [
      ...(await product(join(dir, 'kept'), {}, 'all')),
      ...(await product(join(dir, 'unkept'), { SVC_SCREEN_LIST_KEEP_MS: '0' }, 'list')),
      ...(await product(join(dir, 'audited'), {}, 'write')),
      ...(await product(join(dir, 'unaudited'), { SVC_AUDIT: 'off' }, 'write')),
    ]

    const cpu = (r: Result) => (r.cpuUs ? `${Math.round(r.cpuUs.server + r.cpuUs.db)} (${Math.round(r.cpuUs.server)} + ${Math.round(r.cpuUs.db)})` : '')
    const row = (name: string, r: Result) =>
      `| ${name} | ${Math.round(r.rps)} | ${(r.rps / hello.rps).toFixed(3)} | ${r.p50} / ${r.p99} ms | ${cpu(r)} |${r.non2xx || r.errors ? ` ${r.non2xx} non-2xx, ${r.errors} errors of ${r.total}` : ''}`
    console.log('')
    console.log(`api latency, ${engineLabel(databaseUrl)}, autocannon -c ${C} -d ${D} (load average at the end: ${await loadAvg()})`)
    console.log('| route | req/s | ratio to bare Fastify | latency p50 / p99 | CPU µs per request (server + database) |')
    console.log('| --- | --- | --- | --- | --- |')
    console.log(row("bare Fastify GET / → {hello: 'world'}", hello))
    for (const { name, r } of results) console.log(row(name, r))
    const on = results.find((x) => x.name.startsWith('POST /v1/playlists, audit log on'))!.r
    const off = results.find((x) => x.name.startsWith('POST /v1/playlists, audit log off'))!.r
    const readOn = results.find((x) => x.name.startsWith('GET /v1/me, audit log on'))!.r
    const readOff = results.find((x) => x.name.startsWith('GET /v1/me, audit log off'))!.r
    const total = (r: Result) => (r.cpuUs ? r.cpuUs.server + r.cpuUs.db : Number.NaN)
    console.log('')
    // The ratios (with ÷ without): the median moves with the machine's load, CPU per request much less.
    for (const [what, a, b, target] of [
      ['POST /v1/playlists (a write)', on, off, '≤ 1.05'],
      ['GET /v1/me (a read)', readOn, readOff, 'nothing measurable'],
    ] as const)
      console.log(
        `audit log on ÷ off, ${what}: median ${a.p50} / ${b.p50} ms = ${(a.p50 / b.p50).toFixed(3)}; CPU per request ${Math.round(total(a))} / ${Math.round(total(b))} µs = ${(total(a) / total(b)).toFixed(3)} (target ${target})`,
      )
  } finally {
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
