// Cast fan-out benchmark (not a test): N simulated devices over MQTT/TCP with real
// authentication (device secret checked against its hash), the device ACL and persistent
// sessions (clean: false, LevelDB broker store, file database) connect to a real cloud;
// then POST /v1/casts (scope all) and time until every device has its new desired state.
// Baseline: the same broker publishing one bare message to each of the N subscribers.
//   pnpm exec tsx bench/cast-fanout.ts [N=1000]
//
// The devices run in a child process (this file, forked with BENCH_ROLE=devices): each
// connection costs a file descriptor on both ends, and with both ends in one process
// 10000 devices need more than the usual 20000-descriptor limit. It also keeps the cloud's
// RSS figure free of the clients. Times cross the process boundary as absolute
// high-resolution timestamps (performance.timeOrigin + performance.now()).
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { connectAsync, type MqttClient } from 'mqtt'
import { topics } from '@svc/shared/mqtt/index'
import { createApiClient } from '../cloud/src/client/index.js'

const BATCH = 100
const now = (): number => performance.timeOrigin + performance.now()
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!

type ToDevices =
  | { type: 'connect'; url: string; ids: string[]; secret: string }
  | { type: 'arm'; phase: string; before: Record<string, number> | null }
  | { type: 'close' }
type FromDevices =
  | { type: 'connected'; connectMs: number; rss: number }
  | { type: 'armed' }
  | { type: 'done'; phase: string; times: number[] }
  | { type: 'error'; message: string }

// ---- the devices (child process) ----
async function devices(): Promise<void> {
  const send = (m: FromDevices) => process.send!(m)
  let clients: MqttClient[] = []
  let onMessage: (id: string, version: number) => void = () => undefined
  process.on('message', async (m: ToDevices) => {
    try {
      if (m.type === 'connect') {
        const t0 = performance.now()
        clients = new Array(m.ids.length)
        for (let i = 0; i < m.ids.length; i += BATCH) {
          await Promise.all(
            m.ids.slice(i, i + BATCH).map(async (id, j) => {
              const c = await connectAsync(m.url, { clientId: id, username: id, password: m.secret, clean: false, protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 60_000 })
              c.on('message', (topic, payload) => {
                if (topic !== topics.desired(id)) return
                let version = -1
                try {
                  version = (JSON.parse(payload.toString()) as { version: number }).version
                } catch {
                  // not JSON: ignored
                }
                onMessage(id, version)
              })
              await c.subscribeAsync(topics.desired(id), { qos: 1 })
              clients[i + j] = c
            }),
          )
        }
        send({ type: 'connected', connectMs: performance.now() - t0, rss: process.memoryUsage().rss })
      } else if (m.type === 'arm') {
        const seen = new Map<string, number>()
        const total = clients.length
        onMessage = (id, version) => {
          if (seen.has(id) || (m.before && !(version > (m.before[id] ?? 0)))) return
          seen.set(id, now())
          if (seen.size === total) {
            onMessage = () => undefined
            send({ type: 'done', phase: m.phase, times: [...seen.values()] })
          }
        }
        send({ type: 'armed' })
      } else if (m.type === 'close') {
        await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)))
        process.exit(0)
      }
    } catch (err) {
      send({ type: 'error', message: err instanceof Error ? err.stack ?? err.message : String(err) })
    }
  })
}

// ---- the cloud (this process) ----
async function main(): Promise<void> {
  const N = Number(process.argv[2] ?? 1000)
  const { startServer } = await import('../cloud/src/server.js')
  const { testConfig } = await import('../cloud/src/config.js')
  const { hashSecret } = await import('../cloud/src/auth/secrets.js')
  const { InMemoryContentResolver } = await import('../cloud/src/testing/InMemoryContentResolver.js')

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
  const stamp = new Date().toISOString()
  await services.db.transaction(async (tx) => {
    for (let i = 0; i < N; i++) {
      const id = services.ids.next('screen')
      ids.push(id)
      await tx.run('INSERT INTO screens (id, workspace_id, name, device_secret_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [id, ws.id, `Bench ${i}`, hash, stamp, stamp])
    }
  })
  const rssBefore = process.memoryUsage().rss

  const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, BENCH_ROLE: 'devices' }, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const next = <T extends FromDevices['type']>(type: T): Promise<Extract<FromDevices, { type: T }>> =>
    new Promise((resolve, reject) => {
      const on = (m: FromDevices) => {
        if (m.type === 'error') reject(new Error(`devices: ${m.message}`))
        else if (m.type === type) resolve(m as Extract<FromDevices, { type: T }>)
        else return
        child.off('message', on)
      }
      child.on('message', on)
      child.once('exit', (code) => reject(new Error(`devices process exited (${code})`)))
    })
  const tell = (m: ToDevices) => child.send(m)

  tell({ type: 'connect', url: `mqtt://127.0.0.1:${running.mqttPort}`, ids, secret })
  const { connectMs, rss: devicesRss } = await next('connected')
  await services.presence.idle()
  const rssConnected = process.memoryUsage().rss

  // the cast
  const before = Object.fromEntries((await services.db.all<{ id: string; desired_version: number }>('SELECT id, desired_version FROM screens')).map((r) => [r.id, r.desired_version]))
  let done = next('done')
  tell({ type: 'arm', phase: 'cast', before })
  await next('armed')
  const c0 = now()
  const { response: res, error } = await createApiClient(`http://127.0.0.1:${running.httpPort}`, apiKey).POST('/v1/casts', { body: { contentKind: 'media', contentId: 'med_bench' } })
  const responseMs = now() - c0
  if (res.status !== 201) throw new Error(`cast: ${res.status} ${JSON.stringify(error)}`)
  const lat = (await done).times.map((at) => at - c0).sort((a, b) => a - b)

  // baseline: bare aedes publish of one message to each device's desired topic
  const aedes = services.broker.aedes
  done = next('done')
  tell({ type: 'arm', phase: 'base', before: null })
  await next('armed')
  const b0 = now()
  for (const id of ids) aedes.publish({ cmd: 'publish', topic: topics.desired(id), payload: Buffer.from('{"version":999999999}'), qos: 1, retain: false, dup: false }, () => undefined)
  const baseLat = (await done).times.map((at) => at - b0).sort((a, b) => a - b)
  const baseMax = baseLat[baseLat.length - 1]!

  const fmt = (n: number) => n.toFixed(1)
  const mib = (n: number) => fmt(n / 2 ** 20)
  const maxLat = lat[lat.length - 1]!
  console.log(`devices: ${N} (in a child process)`)
  console.log(`connect storm (auth + subscribe, ${BATCH} at a time): ${fmt(connectMs)} ms total, ${fmt(connectMs / N)} ms/device`)
  console.log(`POST /v1/casts answered in ${fmt(responseMs)} ms (publishing included)`)
  console.log(`cast → device desired state: p50 ${fmt(pct(lat, 50))} ms, p99 ${fmt(pct(lat, 99))} ms, max ${fmt(maxLat)} ms`)
  console.log(`baseline bare aedes publish to ${N} subscribers: p50 ${fmt(pct(baseLat, 50))} ms, p99 ${fmt(pct(baseLat, 99))} ms, max ${fmt(baseMax)} ms`)
  console.log(`ratio cast/baseline: max ${(maxLat / baseMax).toFixed(1)}x, p50 ${(pct(lat, 50) / pct(baseLat, 50)).toFixed(1)}x`)
  console.log(`cloud RSS: ${mib(rssConnected)} MiB with devices connected; ${fmt((rssConnected - rssBefore) / N / 1024)} KiB per connected screen; devices process RSS ${mib(devicesRss)} MiB`)

  const exited = new Promise((r) => child.once('exit', r))
  tell({ type: 'close' })
  await exited
  await running.close()
  rmSync(dir, { recursive: true, force: true })
}

if (process.env.BENCH_ROLE === 'devices') void devices()
else
  main().catch((e) => {
    console.error(e)
    process.exit(1)
  })
