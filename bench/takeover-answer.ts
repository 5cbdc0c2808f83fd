// How long POST /v1/casts and POST /v1/emergencies take to answer at fleet size (not a
// test): the app on a file SQLite database (or PostgreSQL with SVC_DATABASE_URL) with N
// screens inserted directly (pairing N screens through the API is what cast-fanout.ts
// does; here only the takeover's own work is measured), the real content library (one PNG
// uploaded through the API, cast and announced every round), no devices. The fan-out behind the answer runs too; the answer must not wait for it.
//   pnpm exec tsx bench/takeover-answer.ts [N=10000] [--rounds=5] [--database-url=postgres://…]
// (--database-url or BENCH_DATABASE_URL: a fresh schema on that PostgreSQL, dropped at the end.)
// --http sends the POSTs over a real socket (fetch to the app listening on 127.0.0.1) instead of
// Fastify's inject, whose answer can be delivered behind work started after it.
// --marks prints when each POST starts (UTC), to find its statements in a server-side log
// (PostgreSQL's auto_explain: docs/bench-history/2026-11-23-cast-fanout.md, "Takeover rows on PostgreSQL").
// --statements (PostgreSQL) prints each POST's statements of 1 ms or more, with when each began
// and how long it took as the client saw it.
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { PostgresDatabase } from '../cloud/src/platform/db/PostgresDatabase.js'
import { databaseUrlArg, engineLabel, freshSchema } from './lib/engine.js'
import { buildApp, servicesOf } from '../cloud/src/app.js'
import { testConfig } from '../cloud/src/config.js'
import { ROOT, f1, loadAvg, now, tempDir, uploadImage } from './lib/harness.js'
import { screenRow } from '../cloud/test/fixtures/screenRows.js'

/** Times every statement the PostgreSQL client sends between start() and print() (the client's view: queueing included). */
function timeStatements() {
  // The cloud's own PostgreSQL client (a dependency of cloud/, not of the benches).
  const pg = createRequire(join(ROOT, 'cloud', 'package.json'))('pg') as { Client: { prototype: { query: (...a: unknown[]) => unknown } } }
  let seen: { at: number; ms: number; text: string }[] | null = null
  let t0 = 0
  const query = pg.Client.prototype.query
  pg.Client.prototype.query = function (this: unknown, ...a: unknown[]) {
    const began = now()
    const r = query.apply(this, a)
    const list = seen
    const q = a[0] as string | { text?: string }
    const text = String(typeof q === 'string' ? q : q?.text).replace(/\s+/g, ' ')
    if (list && r instanceof Promise)
      r.then(
        () => list.push({ at: began - t0, ms: now() - began, text }),
        () => undefined,
      )
    return r
  }
  return {
    start() {
      seen = []
      t0 = now()
    },
    print(title: string) {
      console.log(title)
      for (const s of seen ?? []) if (s.ms >= 1) console.log(`  @${f1(s.at)} +${f1(s.ms)} ms  ${s.text.slice(0, 150)}`)
      seen = null
    },
  }
}

async function main(): Promise<void> {
  const databaseUrl = databaseUrlArg()
  const args = process.argv.slice(2)
  const N = Number(args.find((a) => /^\d+$/.test(a)) ?? 10_000)
  const rounds = Number(args.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 5)
  const marks = args.includes('--marks')
  const statements = args.includes('--statements') ? timeStatements() : null
  const http = args.includes('--http')
  const dir = tempDir('svc-bench-takeover-')
  const pgSchema = databaseUrl ? await freshSchema(databaseUrl) : null
  const db = pgSchema ? await PostgresDatabase.open(databaseUrl!, { busyTimeoutMs: 5000, schema: pgSchema.schema }) : undefined
  const app = await buildApp(
    testConfig({ dataDir: dir, dbFile: join(dir, 'svc.sqlite'), rateLimitPerMinute: 100_000_000, mediaProcessing: 'background' }),
    db ? { db } : {},
  )
  await app.ready()
  // Listening for the upload (and, with --http, for the POSTs).
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const base = http ? url : null
  const s = servicesOf(app)
  const ws = await s.workspaces.create('Bench', 'us')
  const { secret } = await s.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')
  const at = new Date().toISOString()
  for (let i = 0; i < N; i += 500) {
    const rows = Array.from({ length: Math.min(500, N - i) }, (_, j) =>
      screenRow(`scr_bench${String(i + j).padStart(6, '0')}`, ws.id, at, { name: `S${i + j}` }),
    )
    await s.db.kysely.insertInto('screens').values(rows).execute()
  }
  const mediaId = await uploadImage(url, secret)
  console.log(`N = ${N}, ${engineLabel(databaseUrl)}${base ? ', over HTTP' : ''}; load average ${await loadAvg()}`)
  const post = async (path: string, body: object) => {
    if (marks) console.log(`MARK ${path} ${new Date().toISOString()}`)
    statements?.start()
    const t0 = now()
    if (base) {
      const r = await fetch(base + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      const text = await r.text()
      const ms = now() - t0
      statements?.print(`${path} answered in ${f1(ms)} ms`)
      if (r.status !== 201) throw new Error(`${path}: ${r.status} ${text}`)
      return { ms, id: JSON.parse(text).data.id as string }
    }
    const r = await app.inject({ method: 'POST', url: path, headers: { authorization: `Bearer ${secret}` }, payload: body })
    const ms = now() - t0
    statements?.print(`${path} answered in ${f1(ms)} ms`)
    if (r.statusCode !== 201) throw new Error(`${path}: ${r.statusCode} ${r.body}`)
    return { ms, id: r.json().data.id as string }
  }
  const casts: number[] = []
  const emergencies: number[] = []
  const fanout: number[] = []
  for (let i = 0; i < rounds; i++) {
    const c = await post('/v1/casts', { contentKind: 'media', contentId: mediaId, scopeKind: 'all' })
    casts.push(c.ms)
    const t0 = now()
    await s.desiredPublisher.idle()
    fanout.push(now() - t0 + c.ms)
    const e = await post('/v1/emergencies', { contentKind: 'media', contentId: mediaId, scopeKind: 'all' })
    emergencies.push(e.ms)
    await s.desiredPublisher.idle()
    await app.inject({ method: 'POST', url: `/v1/emergencies/${e.id}/clear`, headers: { authorization: `Bearer ${secret}` } })
    await s.desiredPublisher.idle()
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log(`| N = ${N} (${rounds} rounds; load average at the end ${await loadAvg()}) | median | each |`)
  console.log('| --- | --- | --- |')
  console.log(`| \`POST /v1/casts\` (scope all) answered | ${f1(med(casts))} ms | ${casts.map(f1).join(', ')} |`)
  console.log(`| \`POST /v1/emergencies\` (scope all) answered | ${f1(med(emergencies))} ms | ${emergencies.map(f1).join(', ')} |`)
  console.log(`| … every desired state built and handed to the broker (no devices) | ${f1(med(fanout))} ms | ${fanout.map(f1).join(', ')} |`)
  await app.close()
  await db?.close()
  await pgSchema?.drop()
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  },
)
