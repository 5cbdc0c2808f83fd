// Webhook delivery figures against a local HTTPS receiver (the test CA and certificate):
//  1. throughput: N events queued, then the worker drains the queue (deliveries/second);
//  2. latency: time from events.publish() to the receiver holding the request, with the
//     worker running as in production (woken right after the insert).
// Run: npx tsx bench/webhooks.ts [events=2000] [samples=50]
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { buildApp } from '../cloud/src/app.js'
import { testConfig } from '../cloud/src/config.js'
import { CA_FILE, startReceiver } from '../cloud/test/fixtures/receiver.js'

const N = Number(process.argv[2] ?? 2000)
const SAMPLES = Number(process.argv[3] ?? 50)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'))
const receiver = await startReceiver()
const app = await buildApp(
  testConfig({ dataDir: dir, dbFile: path.join(dir, 'svc.sqlite'), webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE, webhookIntervalMs: 1000 }),
)
await app.ready()
const ws = await app.services.workspaces.create('Bench', 'us')
const { secret: apiKey } = await app.services.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')
const res = await app.inject({
  method: 'POST',
  url: '/v1/webhooks',
  headers: { authorization: `Bearer ${apiKey}` },
  payload: { url: receiver.url, events: ['content.recalled'] },
})
if (res.statusCode !== 201) throw new Error(res.body)
const publish = () =>
  app.services.events.publish({
    event: 'content.recalled',
    workspaceId: ws.id,
    occurredAt: new Date().toISOString(),
    data: { kind: 'media', id: 'med_bench', name: 'File', reason: null, recalledBy: 'bench' },
  })

// 1. Throughput: queue with the worker stopped, then drain.
await app.services.webhookWorker.stop()
let t0 = performance.now()
for (let i = 0; i < N; i++) await publish()
const queueMs = performance.now() - t0
t0 = performance.now()
while (receiver.received.length < N) await app.services.webhookWorker.runOnce()
const drainMs = performance.now() - t0
console.log(`queue:      ${N} events published (one durable row each) in ${queueMs.toFixed(0)} ms = ${((N / queueMs) * 1000).toFixed(0)} events/s`)
console.log(`throughput: ${N} deliveries (signed, HTTPS, batch 50) in ${drainMs.toFixed(0)} ms = ${((N / drainMs) * 1000).toFixed(0)} deliveries/s`)

// 2. Latency with the worker running as in production.
app.services.webhookWorker.start()
const lat: number[] = []
for (let i = 0; i < SAMPLES; i++) {
  const before = receiver.received.length
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
fs.rmSync(dir, { recursive: true, force: true })
