// Time from a screen dropping offline to the `screen.offline` webhook reaching a receiver,
// over real sockets: a real MQTT device (TCP, authenticated) whose socket is destroyed, the
// cloud's presence tracking (debounce grace SVC_SCREEN_OFFLINE_GRACE_MS), the event bus, the
// durable delivery queue and a signed HTTPS POST to a local receiver. Prints, per sample,
// the total and the part beyond the grace period (the system's own latency).
// Run: npx tsx bench/screen-offline.ts [samples=10] [graceMs=1000]
import { servicesOf } from '../cloud/src/app.js'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import mqtt from 'mqtt'
import { startServer } from '../cloud/src/server.js'
import { testConfig } from '../cloud/src/config.js'
import { CA_FILE, startReceiver } from '../cloud/test/fixtures/receiver.js'

const SAMPLES = Number(process.argv[2] ?? 10)
const GRACE = Number(process.argv[3] ?? 1000)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-offline-'))
const receiver = await startReceiver()
const running = await startServer(
  testConfig({
    dataDir: dir,
    dbFile: path.join(dir, 'svc.sqlite'),
    host: '127.0.0.1',
    httpPort: 0,
    mqttPort: 0,
    webhookAllowHosts: ['localhost'],
    webhookCaFile: CA_FILE,
    webhookIntervalMs: 1000,
    screenOfflineGraceMs: GRACE,
    castExpiryIntervalMs: 1000,
  }),
)
const { app } = running
const ws = await servicesOf(app).workspaces.create('Bench', 'us')
const { secret: apiKey } = await servicesOf(app).apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')
const api = async (method: string, url: string, body?: unknown, token: string | null = apiKey) => {
  const res = await app.inject({
    method: method as 'GET',
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(body !== undefined ? { payload: body as object } : {}),
  })
  return res.json() as { data: Record<string, string> }
}
const hook = await api('POST', '/v1/webhooks', { url: receiver.url, events: ['screen.offline'] })
if (!hook.data?.id) throw new Error('webhook not created')

const reg = (await api('POST', '/v1/devices/register', {}, null)).data
const screenId = (await api('POST', '/v1/screens/pair', { code: reg.pairingCode, name: 'Bench screen' })).data.id!
const poll = (await api('GET', `/v1/devices/register/${reg.registrationId}`, undefined, reg.pollSecret)).data
const deviceSecret = poll.deviceSecret!

const totals: number[] = []
for (let i = 0; i < SAMPLES; i++) {
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${running.mqttPort}`, {
    clientId: screenId,
    username: screenId,
    password: deviceSecret,
    clean: false,
    reconnectPeriod: 0,
    will: {
      topic: `svc/v1/screens/${screenId}/status`,
      payload: Buffer.from(JSON.stringify({ status: 'offline', at: new Date().toISOString() })),
      qos: 1,
      retain: true,
    },
  })
  await client.publishAsync(`svc/v1/screens/${screenId}/status`, JSON.stringify({ status: 'online', at: new Date().toISOString() }), { qos: 1, retain: true })
  // Let the cloud see it online (an offline is only announced after an online).
  for (const until = Date.now() + 5000; Date.now() < until; ) {
    const s = (await api('GET', `/v1/screens/${screenId}`)).data
    if (s.status === 'online') break
    await new Promise((r) => setTimeout(r, 20))
  }
  const before = receiver.received.length
  const t0 = performance.now()
  ;(client.stream as unknown as { destroy(): void }).destroy() // the network drops: no DISCONNECT, the Last Will fires
  await receiver.waitFor(before + 1, GRACE + 30_000)
  totals.push(performance.now() - t0)
  client.end(true)
}

const sorted = [...totals].sort((a, b) => a - b)
const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
console.log(`screen drop → screen.offline delivered (grace ${GRACE} ms, ${SAMPLES} samples)`)
console.log(`  total:        p50 ${q(0.5).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms`)
console.log(`  beyond grace: p50 ${(q(0.5) - GRACE).toFixed(1)} ms, max ${(sorted.at(-1)! - GRACE).toFixed(1)} ms`)
await running.close()
await receiver.close()
fs.rmSync(dir, { recursive: true, force: true })
