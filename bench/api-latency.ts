// API latency under a small concurrent load (not a test): a real cloud (startServer on a
// file database, real HTTP), S screens, then C concurrent callers sending R requests in
// all to each route, timed one by one with fetch. The rate limit is raised for the run
// (it would answer 429 after 600 requests a minute).
//   pnpm exec tsx bench/api-latency.ts [requests=1000] [concurrency=10] [screens=200]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { startServer } from '../cloud/src/server.js'
import { testConfig } from '../cloud/src/config.js'
import { InMemoryContentResolver } from '../cloud/src/testing/InMemoryContentResolver.js'

const R = Number(process.argv[2] ?? 1000)
const C = Number(process.argv[3] ?? 10)
const S = Number(process.argv[4] ?? 200)
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'))
const running = await startServer(
  testConfig({ dataDir: dir, dbFile: join(dir, 'svc.sqlite'), httpPort: 0, mqttPort: 0, host: '127.0.0.1', rateLimitPerMinute: 1_000_000 }),
  { content: InMemoryContentResolver.permissive() },
)
const { services } = running.app
const ws = await services.workspaces.create('Bench', 'us')
const apiKey = (await services.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')).secret
const ids: string[] = []
const stamp = new Date().toISOString()
await services.db.transaction(async (tx) => {
  for (let i = 0; i < S; i++) {
    const id = services.ids.next('screen')
    ids.push(id)
    await tx.run('INSERT INTO screens (id, workspace_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)', [id, ws.id, `Bench ${i}`, stamp, stamp])
  }
})
const base = `http://127.0.0.1:${running.httpPort}`

/** Runs `make(i)` R times with C in flight; answers sorted latencies in ms. */
async function load(name: string, expect: number, make: (i: number) => { method: string; path: string; body?: unknown }): Promise<void> {
  const lat: number[] = []
  let next = 0
  let bad = 0
  const one = async (i: number): Promise<void> => {
    const r = make(i)
    const t0 = performance.now()
    const res = await fetch(base + r.path, {
      method: r.method,
      headers: { authorization: `Bearer ${apiKey}`, ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(r.body !== undefined ? { body: JSON.stringify(r.body) } : {}),
    })
    await res.arrayBuffer()
    lat.push(performance.now() - t0)
    if (res.status !== expect) bad++
  }
  for (let i = 0; i < Math.min(50, R); i++) await one(i) // warm-up, not counted
  lat.length = 0
  bad = 0
  const w0 = performance.now()
  await Promise.all(
    Array.from({ length: C }, async () => {
      for (let i = next++; i < R; i = next++) await one(i)
    }),
  )
  const wall = performance.now() - w0
  lat.sort((a, b) => a - b)
  const f = (n: number) => n.toFixed(1)
  console.log(`${name}: ${R} requests, ${C} concurrent: p50 ${f(pct(lat, 50))} ms, p99 ${f(pct(lat, 99))} ms, max ${f(lat[lat.length - 1]!)} ms; ${f((R / wall) * 1000)} req/s${bad ? `; ${bad} answers other than ${expect}` : ''}`)
}

console.log(`screens: ${S}`)
await load('GET /v1/screens (whole list)', 200, () => ({ method: 'GET', path: '/v1/screens' }))
await load('GET /v1/screens?limit=50', 200, () => ({ method: 'GET', path: '/v1/screens?limit=50' }))
await load('POST /v1/casts (one screen each)', 201, (i) => ({ method: 'POST', path: '/v1/casts', body: { contentKind: 'media', contentId: 'med_bench', scopeKind: 'screens', screenIds: [ids[i % S]] } }))
await services.desiredPublisher.idle()
await running.close()
rmSync(dir, { recursive: true, force: true })
