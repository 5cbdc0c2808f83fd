// API → panel → result round trip for a 10-byte serial command, over the real stack:
// HTTP POST /v1/screens/<id>/serial → embedded broker → MQTT device (the agent's
// SerialJobRunner + DisplayDriver) → socat pty → simulated panel (raw echo) → job result
// → GET /v1/serial-jobs/<id> shows `ok`. Compared with the wire time of 10 bytes at 9600
// baud 8N1 (10 bits a byte: 10.4 ms each way), which a pty does not impose.
// Run: npx tsx bench/serial-roundtrip.ts [iterations]
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { connect } from 'mqtt'
import { parseJob, topics } from '../shared/src/mqtt/index.js'
import { SimulatedPanel, PtyTransport } from '../firmware-sim/src/index.js'
import { buildApp } from '../cloud/src/app.js'
import { startServer } from '../cloud/src/server.js'
import { testConfig } from '../cloud/src/config.js'
import { DisplayDriver, SerialJobRunner } from '../agent/src/serial/index.js'
import { createApiClient, ok } from '../cloud/src/client/index.js'

const N = Number(process.argv[2] ?? 50)
const SILENCE_MS = 15
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'))
const config = testConfig({
  dataDir: dir,
  dbFile: path.join(dir, 'svc.sqlite'),
  host: '127.0.0.1',
  httpPort: 0,
  mqttPort: 0,
  statusIntervalMs: 0,
  logLevel: 'warn',
  rateLimitPerMinute: 1_000_000,
})

const pre = await buildApp(config)
const ws = await pre.services.workspaces.create('Bench', 'us')
const key = (await pre.services.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')).secret
await pre.close()

const server = await startServer(config)
const base = `http://127.0.0.1:${server.httpPort}`
// the typed client (cloud/src/client): the operator's key, and the device's poll secret
const api = createApiClient(base, key)
const reg = (await ok(createApiClient(base, null).POST('/v1/devices/register', { body: {} }))).data
const screenId = (await ok(api.POST('/v1/screens/pair', { body: { code: reg.pairingCode, name: 'Bench' } }))).data.id
const secret = (await ok(createApiClient(base, reg.pollSecret).GET('/v1/devices/register/{id}', { params: { path: { id: reg.registrationId } } }))).data
  .deviceSecret

const panel = new SimulatedPanel({ protocol: 'raw' })
const pty = new PtyTransport(panel)
await pty.start()
const driver = new DisplayDriver({ path: pty.hostPath, protocol: null, rawSilenceMs: SILENCE_MS, timeoutMs: 1000 })
await driver.start()
const runner = new SerialJobRunner(driver)

const device = connect(`mqtt://127.0.0.1:${server.mqttPort}`, { clientId: screenId, username: screenId, password: secret, clean: false })
await new Promise<void>((r) => device.once('connect', () => r()))
await device.subscribeAsync(topics.jobs(screenId), { qos: 1 })
device.on('message', (_topic, payload) => {
  const j = parseJob(payload)
  if (!j.ok || j.value.kind !== 'serial') return
  void runner.run(j.value).then((result) => device.publishAsync(topics.jobResults(screenId), JSON.stringify(result), { qos: 1 }))
})

const value = '00 01 02 03 04 05 06 07 08 09' // 10 bytes
const cmd = Buffer.from(value.replace(/ /g, ''), 'hex')
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!
  return `median ${q(0.5).toFixed(1)} ms, p95 ${q(0.95).toFixed(1)} ms, min ${s[0]!.toFixed(1)} ms`
}

// 1) the serial leg alone: driver → pty → panel → driver (raw reply closed by silence)
const direct: number[] = []
for (let i = 0; i < N; i++) {
  const t0 = performance.now()
  const r = await driver.send(cmd)
  if (r.outcome !== 'ok') throw new Error(`direct: ${r.outcome}`)
  direct.push(performance.now() - t0)
}

// 2) the whole path: API → broker → device → panel → result → API shows ok
const full: number[] = []
for (let i = 0; i < N; i++) {
  const t0 = performance.now()
  const job = (await ok(api.POST('/v1/screens/{id}/serial', { params: { path: { id: screenId } }, body: { value, encoding: 'hex' } }))).data
  for (;;) {
    const j = (await ok(api.GET('/v1/serial-jobs/{id}', { params: { path: { id: job.id } } }))).data
    if (j.status === 'ok') break
    if (!['queued', 'sent'].includes(j.status)) throw new Error(`job ${j.status}`)
    await new Promise((r) => setTimeout(r, 2))
  }
  full.push(performance.now() - t0)
}

const wire = (10 * 10 * 1000) / 9600
console.log(`serial round trip, 10-byte command, ${N} runs each (raw echo panel on a socat pty)`)
console.log(`  wire time at 9600 8N1: ${wire.toFixed(1)} ms each way, ${(2 * wire).toFixed(1)} ms there and back (a pty adds none of it)`)
console.log(`  driver → pty → panel → driver: ${stats(direct)} (includes the ${SILENCE_MS} ms silence that ends a raw reply)`)
console.log(`  API → broker → agent → panel → result → API: ${stats(full)} (GET polled every ~2 ms)`)
console.log(`  estimate on a real 9600-baud line: API round trip median + ${(2 * wire).toFixed(1)} ms`)

device.end(true)
await driver.stop()
await pty.stop()
panel.close()
await server.close()
fs.rmSync(dir, { recursive: true, force: true })
