// Webhook delivery figures against a local HTTPS receiver (the test CA and certificate) in
// its own process:
//  0. offline: M screens online whose devices are gone (seeded, then a restart finds no
//     connection for them) announced offline by one presence sweep, as the product raises
//     `screen.offline` after a network cut (status change + outbox row, dispatched: a delivery each);
//  1. events: N events recorded and dispatched (an outbox row, then a delivery row each) by
//     P publishers at once, as concurrent requests and services raise them (events/second);
//  2. throughput: the worker drains the N deliveries (deliveries/second), with the cloud
//     process's CPU time per delivery (steadier than wall time on a busy machine);
//  3. latency: time from an event's record and dispatch to the receiver holding the request, with the
//     worker running as in production (woken right after the insert).
// Run: npx tsx bench/webhooks.ts [events=2000] [samples=50] [--database-url=postgres://…] [--endpoint-concurrency=16] [--publishers=50] [--offline=M (default: events)]
// (--publishers: events recorded at once; 1 records them one after another, as the bench did before)
// (--endpoint-concurrency: the cloud's SVC_WEBHOOK_ENDPOINT_CONCURRENCY, requests in flight to the receiver)
// (or BENCH_DATABASE_URL); BENCH_CPU_PROFILE=<file> writes a CPU profile of the drain, <file>.offline.cpuprofile one of the sweep, <file>.events.cpuprofile one of the published events and <file>.tx.cpuprofile one of the events in a transaction each.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { buildApp, servicesOf } from '../cloud/src/app.js'
import { testConfig } from '../cloud/src/config.js'
import { PostgresDatabase } from '../cloud/src/platform/db/PostgresDatabase.js'
import { CA_FILE } from '../cloud/test/fixtures/receiver.js'
import { screenRow } from '../cloud/test/fixtures/screenRows.js'
import { databaseUrlArg, engineLabel, freshSchema } from './lib/engine.js'
import { loadAvg } from './lib/harness.js'
import { profile } from './lib/profile.js'
import { startReceiverProcess } from './lib/receiver-process.js'

const databaseUrl = databaseUrlArg()
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'))
const N = Number(positional[0] ?? 2000)
const SAMPLES = Number(positional[1] ?? 50)
const concurrencyArg = process.argv.find((a) => a.startsWith('--endpoint-concurrency='))
const endpointConcurrency = concurrencyArg ? Number(concurrencyArg.split('=')[1]) : undefined
const publishersArg = process.argv.find((a) => a.startsWith('--publishers='))
const PUBLISHERS = Math.max(1, publishersArg ? Number(publishersArg.split('=')[1]) : 50)
const offlineArg = process.argv.find((a) => a.startsWith('--offline='))
/** Screens going offline at once (default N). */
const OFF = Math.max(1, offlineArg ? Number(offlineArg.split('=')[1]) : N)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'))
const receiver = await startReceiverProcess()
const pgSchema = databaseUrl ? await freshSchema(databaseUrl) : null
const db = pgSchema ? await PostgresDatabase.open(databaseUrl!, { busyTimeoutMs: 5000, schema: pgSchema.schema }) : undefined
const config = testConfig({
  dataDir: dir,
  dbFile: path.join(dir, 'svc.sqlite'),
  webhookAllowHosts: ['localhost'],
  webhookCaFile: CA_FILE,
  webhookIntervalMs: 1000,
  // The restart gives the dropped screens this long to come back before the sweep announces them.
  screenOfflineGraceMs: 1,
  ...(endpointConcurrency ? { webhookEndpointConcurrency: endpointConcurrency } : {}),
})
const first = await buildApp(config, db ? { db } : {})
await first.ready()
const ws = await servicesOf(first).workspaces.create('Bench', 'us')
const { secret: apiKey } = await servicesOf(first).apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')
const res = await first.inject({
  method: 'POST',
  url: '/v1/webhooks',
  headers: { authorization: `Bearer ${apiKey}` },
  payload: { url: receiver.url, events: ['content.recalled', 'screen.offline'] },
})
if (res.statusCode !== 201) throw new Error(res.body)
// OFF screens online whose devices were last seen a minute ago (past the offline grace),
// written as pairing leaves a screen, then marked online as its first connection does.
const seenAt = new Date(Date.now() - 60_000).toISOString()
const screenIds = Array.from({ length: OFF }, (_, i) => `scr_bench${String(i).padStart(6, '0')}`)
for (let i = 0; i < OFF; i += 200) {
  await servicesOf(first)
    .db.kysely.insertInto('screens')
    .values(
      screenIds
        .slice(i, i + 200)
        .map((id, j) => screenRow(id, ws.id, seenAt, { name: `Screen ${i + j}`, status: 'online', status_since: seenAt, last_seen_at: seenAt })),
    )
    .execute()
}
await first.close()
// A new process on the same database: its presence finds those screens online with no
// connection and counts them away since they were last seen; its first sweep announces
// them offline (screen.offline recorded with each status change, then dispatched: one
// delivery each), as it would after a network cut that took a fleet away.
const app = await buildApp(config, db ? { db } : {})
await app.ready()
console.log(
  `engine:     ${engineLabel(databaseUrl)}; ${servicesOf(app).webhookSender.endpointConcurrency} requests in flight per endpoint; load average ${await loadAvg()}`,
)
const event = () =>
  ({
    event: 'content.recalled',
    workspaceId: ws.id,
    occurredAt: new Date().toISOString(),
    data: { kind: 'media', id: 'med_bench', name: 'File', contentName: 'bench.png', reason: null, recalledBy: 'bench' },
  }) as const
// As a service raises an event that is no change's: published (recorded with the others of
// its turn in one transaction), then dispatched behind (which inserts the event's webhook
// deliveries and wakes the worker).
const publish = () => servicesOf(app).outbox.publish(event())
// As a change records its event: in the change's own transaction, then dispatched.
const recordInTransaction = async () => {
  await servicesOf(app).db.transaction((tx) => servicesOf(app).outbox.record(tx, event()))
  await servicesOf(app).outbox.dispatch()
}
/** `n` events by PUBLISHERS callers at once, each awaiting its own before the next; then every dispatch done. */
const raise = async (n: number, one: () => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: PUBLISHERS }, async () => {
      while (next < n) {
        next++
        await one()
      }
    }),
  )
  await servicesOf(app).outbox.dispatch()
}

// 1. Events, recorded with the worker stopped; 2. then drained.
await servicesOf(app).webhookWorker.stop()
// The screens going offline: one sweep (past their grace), until every event is dispatched.
await new Promise((r) => setTimeout(r, 10))
let t0 = performance.now()
let offCpu = process.cpuUsage()
await profile(() => servicesOf(app).presence.sweep(), process.env.BENCH_CPU_PROFILE ? `${process.env.BENCH_CPU_PROFILE}.offline.cpuprofile` : undefined)
const offMs = performance.now() - t0
offCpu = process.cpuUsage(offCpu)
const offCpuMs = (offCpu.user + offCpu.system) / 1000
const offRecorded = Number(
  (
    await servicesOf(app)
      .db.kysely.selectFrom('events_outbox')
      .select((e) => e.fn.countAll().as('n'))
      .where('event', '=', 'screen.offline')
      .executeTakeFirstOrThrow()
  ).n,
)
if (offRecorded !== OFF) throw new Error(`${offRecorded} screen.offline events recorded, ${OFF} screens went away`)
// A fifth as many in a transaction each first (the figure of an event recorded with its change).
const NT = Math.max(1, Math.floor(N / 5))
t0 = performance.now()
let txCpu = process.cpuUsage()
await profile(() => raise(NT, recordInTransaction), process.env.BENCH_CPU_PROFILE ? `${process.env.BENCH_CPU_PROFILE}.tx.cpuprofile` : undefined)
const txMs = performance.now() - t0
txCpu = process.cpuUsage(txCpu)
const txCpuMs = (txCpu.user + txCpu.system) / 1000
t0 = performance.now()
let queueCpu = process.cpuUsage()
await profile(() => raise(N, publish), process.env.BENCH_CPU_PROFILE ? `${process.env.BENCH_CPU_PROFILE}.events.cpuprofile` : undefined)
const queueMs = performance.now() - t0
queueCpu = process.cpuUsage(queueCpu)
const queueCpuMs = (queueCpu.user + queueCpu.system) / 1000
const total = OFF + NT + N
t0 = performance.now()
const cpu0 = process.cpuUsage()
await profile(async () => {
  while (receiver.count() < total) {
    await servicesOf(app).webhookWorker.runOnce()
    if (receiver.count() < total) await receiver.waitFor(total, 2000).catch(() => undefined)
  }
})
const drainMs = performance.now() - t0
const cpu = process.cpuUsage(cpu0)
const cpuMs = (cpu.user + cpu.system) / 1000
const eventsLine = (label: string, n: number, ms: number, cpuMs: number) =>
  console.log(
    `${label} ${n} events recorded and dispatched (an outbox row and a delivery row each) by ${PUBLISHERS} callers at once in ${ms.toFixed(0)} ms = ${((n / ms) * 1000).toFixed(0)} events/s; ` +
      `CPU ${cpuMs.toFixed(0)} ms = ${((cpuMs * 1000) / n).toFixed(0)} µs per event (${((n / cpuMs) * 1000).toFixed(0)} events per CPU-second)`,
  )
console.log(
  `offline:    ${OFF} screens announced offline by one sweep (status change, screen.offline outbox row and delivery row each) in ${offMs.toFixed(0)} ms = ${((OFF / offMs) * 1000).toFixed(0)} events/s; ` +
    `CPU ${offCpuMs.toFixed(0)} ms = ${((offCpuMs * 1000) / OFF).toFixed(0)} µs per event (${((OFF / offCpuMs) * 1000).toFixed(0)} events per CPU-second)`,
)
eventsLine('events:    ', N, queueMs, queueCpuMs)
eventsLine('events, a transaction each:', NT, txMs, txCpuMs)
console.log(
  `throughput: ${total} deliveries (signed, HTTPS, keep-alive) in ${drainMs.toFixed(0)} ms = ${((total / drainMs) * 1000).toFixed(0)} deliveries/s; ` +
    `cloud CPU ${cpuMs.toFixed(0)} ms = ${((cpuMs * 1000) / total).toFixed(0)} µs per delivery (${((total / cpuMs) * 1000).toFixed(0)} deliveries per CPU-second); ` +
    `${receiver.connections()} TLS connections accepted by the receiver`,
)

// 2. Latency with the worker running as in production.
servicesOf(app).webhookWorker.start()
const lat: number[] = []
for (let i = 0; i < SAMPLES; i++) {
  const before = receiver.count()
  const s = performance.now()
  await publish()
  await receiver.waitFor(before + 1, 10_000)
  lat.push(performance.now() - s)
}
lat.sort((a, b) => a - b)
const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!.toFixed(1)
console.log(`latency:    publish → received over ${SAMPLES} events: median ${q(0.5)} ms, p95 ${q(0.95)} ms, max ${lat[lat.length - 1]!.toFixed(1)} ms`)

await app.close()
await receiver.close()
await pgSchema?.drop()
fs.rmSync(dir, { recursive: true, force: true })
