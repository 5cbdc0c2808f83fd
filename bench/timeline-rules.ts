// Timelines and previews of a 1,000-rule schedule, and what the rest of the API answers
// meanwhile (not a test): the product against a bare Fastify route, each in its own process.
//   pnpm exec tsx bench/timeline-rules.ts [--rules=1000] [--rounds=10]
//
// Product: the cloud started as `pnpm start` starts it (its CLI, file SQLite database), one
// screen paired through the API as a device pairs, one real PNG uploaded, and a schedule of
// N seeded random rules (start, end, weekdays, priority) assigned to it. The API takes at
// most 200 rules, so the N-rule schedule is one saved before that limit: made through the
// API with one rule, then its rules written into the database, as an older schedule would
// be. Measured, each as wall time seen by the client on loopback:
//   (a) GET /v1/screens/<id>/timeline, the default window (the next 24 h), R times;
//   (b) the same over 31 days, R times;
//   (c) POST /v1/timeline/preview over 1 day of assigning the N-rule schedule to the screen;
//   (d) POST /v1/timeline/preview over 1 day of a 200-rule schedule (the limit) with every
//       rule's priority reversed, and the answer to the same PATCH of the N-rule schedule;
//   (e) GET /v1/me one at a time, alone and while four 31-day timelines are walked without
//       pause (each answered, another sent): the latency other callers see meanwhile.
// Baseline: bench/lib/bare-fastify.ts, GET / one request at a time (the HTTP round trip).
import { createRequire } from 'node:module'
import { join } from 'node:path'
import {
  call,
  cli,
  cloudEnv,
  expect,
  f1,
  freePort,
  killAll,
  loadAvg,
  now,
  pairOne,
  pct,
  ROOT,
  startBareFastify,
  startCloud,
  stop,
  tempDir,
  uploadImage,
} from './lib/harness.js'
import { seededRandom } from '../shared/src/testing/random.js'

const arg = (name: string, def: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def)
const N = arg('rules', 1000)
const R = arg('rounds', 10)

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b)
const median = (xs: number[]) => pct(sorted(xs), 50)
const p90 = (xs: number[]) => pct(sorted(xs), 90)
const max = (xs: number[]) => sorted(xs).at(-1)!

async function timed(n: number, f: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = now()
    await f(i)
    out.push(now() - t0)
  }
  return out
}

function randomRules(n: number, content: { kind: string; id: string }) {
  const r = seededRandom(42)
  const hhmm = () => `${String(Math.floor(r() * 24)).padStart(2, '0')}:${String(Math.floor(r() * 60)).padStart(2, '0')}`
  return Array.from({ length: n }, (_, i) => ({
    id: `rule${i}`,
    priority: Math.floor(r() * 100),
    start: hhmm(),
    end: hhmm(),
    ...(r() < 0.5 ? { days: [...new Set([Math.floor(r() * 7), Math.floor(r() * 7)])] } : {}),
    content,
  }))
}

/** The schedule's rules written into the database, as a schedule saved before the limit holds them. */
async function writeRules(dbFile: string, id: string, rules: unknown[]): Promise<void> {
  type Done = (e: Error | null, row?: unknown) => void
  interface Db {
    run(sql: string, params: unknown[], done: Done): void
    get(sql: string, params: unknown[], done: Done): void
    configure(option: 'busyTimeout', ms: number): void
    close(done: () => void): void
  }
  // The cloud's own SQLite driver (a dependency of the cloud package, not of the benches).
  const sqlite3 = createRequire(join(ROOT, 'cloud', 'package.json'))('sqlite3') as { Database: new (file: string) => Db }
  const db = new sqlite3.Database(dbFile)
  const run = (sql: string, params: unknown[]) => new Promise<void>((resolve, reject) => db.run(sql, params, (e) => (e ? reject(e) : resolve())))
  const get = (sql: string, params: unknown[]) =>
    new Promise<{ body: string }>((resolve, reject) => db.get(sql, params, (e, row) => (e ? reject(e) : resolve(row as { body: string }))))
  db.configure('busyTimeout', 10_000)
  const row = await get('SELECT body FROM content_items WHERE id = ?', [id])
  await run('UPDATE content_items SET body = ? WHERE id = ?', [JSON.stringify({ ...JSON.parse(row.body), rules }), id])
  await new Promise<void>((resolve) => db.close(() => resolve()))
}

async function main(): Promise<void> {
  const dir = tempDir('svc-bench-timeline-rules-')
  try {
    const { proc: bare, port: bport } = await startBareFastify()
    const bareUrl = `http://127.0.0.1:${bport}/`
    await timed(200, () => call(bareUrl)) // warm-up

    const env = cloudEnv(join(dir, 'data'), await freePort(), await freePort(), { SVC_RATE_LIMIT: '100000000', SVC_LOG_LEVEL: 'warn' })
    const { apiKey } = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench'])) as { apiKey: string }
    const cloud = await startCloud(env, join(dir, 'cloud.log'))
    const auth = { authorization: `Bearer ${apiKey}` }
    const api = (method: string, path: string, body?: unknown) => call(cloud.base + path, { method, headers: auth, ...(body !== undefined ? { body } : {}) })

    const { screenId } = await pairOne(cloud.base, apiKey, 1, 'Lobby')
    const media = { kind: 'media', id: await uploadImage(cloud.base, apiKey) }
    const made = (name: string, rules: unknown[]) =>
      api('POST', '/v1/schedules', { name, timezone: 'Europe/Berlin', rules, fallback: media }).then((a) => expect(a, 201, name).body.data.id as string)
    const big = await made(`${N} rules`, randomRules(1, media))
    await writeRules(join(dir, 'data', 'svc.sqlite'), big, randomRules(N, media))
    const capped = await made('200 rules', randomRules(200, media))
    expect(await api('POST', `/v1/screens/${screenId}/assign`, { contentKind: 'schedule', contentId: capped }), 200, 'assign')

    const from = new Date(Date.now() + 3_600_000).toISOString()
    const day = new Date(Date.parse(from) + 86_400_000).toISOString()
    const month = new Date(Date.parse(from) + 31 * 86_400_000).toISOString()

    // (c) and (d) while the screen shows the 200-rule schedule
    const assignBig = { request: { method: 'POST', path: `/v1/screens/${screenId}/assign`, body: { contentKind: 'schedule', contentId: big } }, from, to: day }
    const assignAnswer = expect(await api('POST', '/v1/timeline/preview', assignBig), 200, 'preview assign').body
    const previewAssign = await timed(R, () => api('POST', '/v1/timeline/preview', assignBig))
    const reversed = randomRules(200, media).map((r) => ({ ...r, priority: 100 - r.priority }))
    const reverse = { request: { method: 'PATCH', path: `/v1/schedules/${capped}`, body: { rules: reversed } }, from, to: day }
    const reverseAnswer = expect(await api('POST', '/v1/timeline/preview', reverse), 200, 'preview reverse').body
    const previewReverse = await timed(R, () => api('POST', '/v1/timeline/preview', reverse))
    const bigReversed = randomRules(N, media).map((r) => ({ ...r, priority: 100 - r.priority }))
    const refused = await api('POST', '/v1/timeline/preview', {
      request: { method: 'PATCH', path: `/v1/schedules/${big}`, body: { rules: bigReversed } },
      from,
      to: day,
    })

    // (a) and (b) with the N-rule schedule on the screen
    expect(await api('POST', `/v1/screens/${screenId}/assign`, { contentKind: 'schedule', contentId: big }), 200, 'assign')
    const first = expect(await api('GET', `/v1/screens/${screenId}/timeline`), 200, 'timeline').body.data
    const firstMonth = expect(await api('GET', `/v1/screens/${screenId}/timeline?from=${from}&to=${month}`), 200, 'timeline').body.data
    const tl24 = await timed(R, () => api('GET', `/v1/screens/${screenId}/timeline`))
    const tl31 = await timed(R, () => api('GET', `/v1/screens/${screenId}/timeline?from=${from}&to=${month}`))

    // (e) /v1/me alone, then beside four 31-day walks kept going
    await timed(20, () => api('GET', '/v1/me'))
    const meAlone = await timed(R * 10, () => api('GET', '/v1/me'))
    let busy = true
    let walks = 0
    const walkers = Array.from({ length: 4 }, async () => {
      while (busy) {
        expect(await api('GET', `/v1/screens/${screenId}/timeline?from=${from}&to=${month}`), 200, 'timeline')
        walks++
      }
    })
    const meBusy = await timed(R * 10, () => api('GET', '/v1/me'))
    busy = false
    await Promise.all(walkers)
    const bareTimes = await timed(R * 10, () => call(bareUrl))
    await stop(cloud.proc)
    await stop(bare)

    console.log('')
    console.log(`timelines of a ${N}-rule schedule; SQLite file database (load average at the end: ${await loadAvg()})`)
    console.log('| measured | median | p90 | max |')
    console.log('| --- | --- | --- | --- |')
    const row = (what: string, xs: number[]) => console.log(`| ${what} | ${f1(median(xs))} ms | ${f1(p90(xs))} ms | ${f1(max(xs))} ms |`)
    row(`GET timeline, default 24 h (${first.segments.length} segments), ${R} times`, tl24)
    row(`GET timeline, 31 days (${firstMonth.segments.length} segments${firstMonth.truncated ? ', truncated' : ''}), ${R} times`, tl31)
    row(`POST preview, 1 day, assigning the ${N}-rule schedule (${assignAnswer.data[0].after.length} segments after), ${R} times`, previewAssign)
    row(`POST preview, 1 day, 200 rules' priorities reversed (changed: ${reverseAnswer.data[0].changed}), ${R} times`, previewReverse)
    row(`GET /v1/me alone, ${R * 10} times`, meAlone)
    row(`GET /v1/me while four 31-day timelines are walked (${walks} answered meanwhile), ${R * 10} times`, meBusy)
    row(`bare Fastify GET /, ${R * 10} times`, bareTimes)
    console.log(`PATCH of the ${N}-rule schedule with its priorities reversed, previewed: ${refused.status} ${refused.body?.message ?? ''}`)
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
