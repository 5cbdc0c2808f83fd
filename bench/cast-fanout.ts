// Cast fan-out benchmark (not a test): N simulated devices over MQTT/TCP with real
// authentication (device secret checked against its hash), the device ACL and persistent
// sessions (clean: false, LevelDB broker store, file database) connect to a real cloud;
// then POST /v1/casts (scope all) and time until every device has its new desired state.
// Baseline: the same broker publishing one bare message to N subscribers.
//   pnpm exec tsx bench/cast-fanout.ts [N=1000]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { connectAsync, type MqttClient } from 'mqtt'
import { topics } from '@svc/shared/mqtt/index'
import { startServer } from '../cloud/src/server.js'
import { testConfig } from '../cloud/src/config.js'
import { hashSecret } from '../cloud/src/auth/secrets.js'
import { InMemoryContentResolver } from '../cloud/src/testing/InMemoryContentResolver.js'

const N = Number(process.argv[2] ?? 1000)
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'))
  const content = InMemoryContentResolver.permissive()
  const running = await startServer(testConfig({ dataDir: dir, dbFile: join(dir, 'svc.sqlite'), httpPort: 0, mqttPort: 0, host: '127.0.0.1' }), { content })
  const { services } = running.app
  const ws = await services.workspaces.create('Bench', 'us')
  const apiKey = (await services.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')).secret
  // Screens made directly (pairing N devices over HTTP is not what is measured); the broker
  // still checks each device secret against its stored hash at CONNECT.
  const secret = 'bench-device-secret'
  const hash = hashSecret(secret)
  const ids: string[] = []
  const now = new Date().toISOString()
  await services.db.transaction(async (tx) => {
    for (let i = 0; i < N; i++) {
      const id = services.ids.next('screen')
      ids.push(id)
      await tx.run('INSERT INTO screens (id, workspace_id, name, device_secret_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [id, ws.id, `Bench ${i}`, hash, now, now])
    }
  })
  const rssBefore = process.memoryUsage().rss
  const url = `mqtt://127.0.0.1:${running.mqttPort}`
  const clients: MqttClient[] = new Array(N)
  const received = new Map<string, number>()
  let want: (id: string, version: number) => void = () => undefined
  const t0 = performance.now()
  const BATCH = 100
  for (let i = 0; i < N; i += BATCH) {
    await Promise.all(
      ids.slice(i, i + BATCH).map(async (id, j) => {
        const c = await connectAsync(url, { clientId: id, username: id, password: secret, clean: false, protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 30_000 })
        c.on('message', (topic, payload) => {
          if (topic === topics.desired(id)) want(id, JSON.parse(payload.toString()).version as number)
        })
        await c.subscribeAsync(topics.desired(id), { qos: 1 })
        clients[i + j] = c
      }),
    )
  }
  const connectMs = performance.now() - t0
  await running.app.services.presence.idle()
  const rssConnected = process.memoryUsage().rss

  // the cast
  const before = new Map((await services.db.all<{ id: string; desired_version: number }>('SELECT id, desired_version FROM screens')).map((r) => [r.id, r.desired_version]))
  const lat: number[] = []
  const done = new Promise<void>((resolve) => {
    want = (id, version) => {
      if (version > (before.get(id) ?? 0) && !received.has(id)) {
        received.set(id, performance.now())
        if (received.size === N) resolve()
      }
    }
  })
  const c0 = performance.now()
  const res = await fetch(`http://127.0.0.1:${running.httpPort}/v1/casts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ contentKind: 'media', contentId: 'med_bench' }),
  })
  const responseMs = performance.now() - c0
  if (res.status !== 201) throw new Error(`cast: ${res.status} ${await res.text()}`)
  await done
  for (const at of received.values()) lat.push(at - c0)
  lat.sort((a, b) => a - b)

  // baseline: bare aedes publish of one message to N subscribers (a topic each device holds)
  const aedes = services.broker.aedes
  const base = new Map<string, number>()
  const baseDone = new Promise<void>((resolve) => {
    want = () => undefined
    for (let i = 0; i < N; i++) {
      const id = ids[i]!
      clients[i]!.removeAllListeners('message')
      clients[i]!.on('message', () => {
        if (!base.has(id)) {
          base.set(id, performance.now())
          if (base.size === N) resolve()
        }
      })
    }
  })
  const b0 = performance.now()
  for (const id of ids) aedes.publish({ cmd: 'publish', topic: topics.desired(id), payload: Buffer.from('{"version":999999999}'), qos: 1, retain: false, dup: false }, () => undefined)
  await baseDone
  const baseMax = Math.max(...[...base.values()].map((t) => t - b0))

  const fmt = (n: number) => n.toFixed(1)
  console.log(`devices: ${N}`)
  console.log(`connect storm (auth + subscribe, ${BATCH} at a time): ${fmt(connectMs)} ms total, ${fmt(connectMs / N)} ms/device`)
  console.log(`POST /v1/casts answered in ${fmt(responseMs)} ms (publishing included)`)
  console.log(`cast → device desired state: p50 ${fmt(pct(lat, 50))} ms, p99 ${fmt(pct(lat, 99))} ms, max ${fmt(lat[lat.length - 1]!)} ms`)
  console.log(`baseline bare aedes publish to ${N} subscribers: max ${fmt(baseMax)} ms; ratio cast/baseline ${(lat[lat.length - 1]! / baseMax).toFixed(1)}x`)
  console.log(`cloud RSS: ${fmt(rssConnected / 2 ** 20)} MiB with devices (in-process clients included); ${fmt((rssConnected - rssBefore) / N / 1024)} KiB per connected screen (cloud + in-process client)`)

  await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)))
  await running.close()
  rmSync(dir, { recursive: true, force: true })
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
