// Cloud memory per connected screen (not a test): the cloud started as `pnpm start` starts
// it (its CLI, a file SQLite database, the default broker persistence) with N screens
// written into its database before it starts the way pairing leaves them (a `screens` row
// and the hash of its device secret; the first desired state is built and published,
// retained, when the device subscribes, as after any restart); then N real MQTT
// connections (mqtt.js, clean: false, each with its own credential, doing what the agent
// does at connect: a Last Will on its status topic, `online` published retained, QoS 1
// subscriptions to its `desired` and `jobs` topics) from device processes of at most 10,000 connections each,
// 100 connecting at a time. Measured: the cloud's RSS after a full garbage collection with
// no device connected (the idle baseline, every screen already in the database), then with
// all N connected, every desired state delivered and the cloud quiet again; printed as
// (RSS connected − RSS idle) / N, with the V8 heap's share beside it.
//
//   pnpm exec tsx bench/memory-per-screen.ts [N=10000] [--heap-snapshots=<dir>]
//
// The open-files limit: the cloud holds one descriptor per connection and each device
// process one per client; the bench raises both limits with prlimit(1) (as root, or within
// the hard limit) and says in one line which limit stopped it when it cannot. Connections
// come from 200 loopback source addresses (127.0.x.7), so the ephemeral port range never
// runs out and the broker's handshakes-per-address bound (32) is not what is measured.
// Then 30 scrapes of GET /metrics (SVC_METRICS_PORT) at N connected, timed to the last byte.
// --heap-snapshots=<dir>: a V8 heap snapshot of the cloud (bench/lib/heap-signal.mjs) at idle
// and connected, to compare what each connection holds (bench/lib/heap-diff.mjs); writing a
// snapshot grows the RSS, so the RSS figures of such a run are not the memory figure.
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import net from 'node:net'
import { MqttClient } from 'mqtt'
import { encodeMessage, topics } from '@svc/shared/mqtt/index'
import { openDatabase } from '../cloud/src/platform/db/open.js'
import { migrate } from '../cloud/src/platform/db/migrate.js'
import { testConfig } from '../cloud/src/config.js'
import { hashSecret } from '../cloud/src/platform/secrets.js'
import { screenRow } from '../cloud/test/fixtures/screenRows.js'
import {
  ROOT,
  cli,
  cloudEnv,
  f1,
  forkScript,
  freePort,
  killAll,
  loadAvg,
  now,
  raiseNofile,
  settle,
  sleep,
  startCloud,
  steadyRss,
  stop,
  tempDir,
} from './lib/harness.js'

const PER_PROCESS = 10_000
const SOURCES = 200
const secretOf = (i: number) => `bench-device-secret-${i}`
const idOf = (i: number) => `scr_bench${String(i).padStart(7, '0')}`

type ToDevices = { type: 'connect'; url: string; from: number; to: number }
type FromDevices = { type: 'connected'; ms: number } | { type: 'desired'; count: number; bytes: number } | { type: 'error'; message: string }

// ---- a device process ----
function devices(): void {
  const clients: MqttClient[] = []
  let desired = 0
  let bytes = 0
  process.on('message', async (m: ToDevices) => {
    try {
      const t0 = now()
      for (let i = m.from; i < m.to; i += 100) {
        await Promise.all(
          Array.from({ length: Math.min(100, m.to - i) }, async (_, j) => {
            const k = i + j
            const id = idOf(k)
            const u = new URL(m.url)
            // Its own TCP stream: mqtt.js passes no source address to the socket.
            const stream = () =>
              net.connect({
                host: u.hostname,
                port: Number(u.port),
                // Spread over source addresses: one address has about 28,000 ephemeral ports.
                localAddress: `127.0.${10 + (k % SOURCES)}.7`,
              })
            const c = new MqttClient(stream, {
              clientId: id,
              username: id,
              password: secretOf(k),
              clean: false,
              protocolVersion: 4,
              reconnectPeriod: 0,
              connectTimeout: 300_000,
              // As the agent connects (agent/src/link/MqttLink.ts): its Last Will on its status
              // topic, `online` retained once connected, its `desired` and `jobs` topics.
              will: { topic: topics.status(id), payload: encodeMessage({ status: 'offline', at: new Date().toISOString() }), qos: 1, retain: true },
            })
            await new Promise<void>((resolve, reject) => {
              c.once('connect', () => resolve())
              c.once('error', reject)
              c.once('close', () => reject(new Error(`${id}: connection closed before CONNACK`)))
            })
            let got = false
            c.on('message', (_topic, payload) => {
              if (got) return
              got = true
              bytes = payload.length
              desired++
            })
            await c.publishAsync(topics.status(id), encodeMessage({ status: 'online', at: new Date().toISOString() }), { qos: 1, retain: true })
            await c.subscribeAsync({ [topics.desired(id)]: { qos: 1 }, [topics.jobs(id)]: { qos: 1 } })
            clients.push(c)
          }),
        )
      }
      process.send!({ type: 'connected', ms: now() - t0 } satisfies FromDevices)
      const t = setInterval(() => process.send!({ type: 'desired', count: desired, bytes } satisfies FromDevices), 1000)
      process.once('disconnect', () => clearInterval(t))
    } catch (e) {
      process.send!({ type: 'error', message: (e as Error).message } satisfies FromDevices)
    }
  })
  process.on('disconnect', () => process.exit(0))
}

async function main(): Promise<void> {
  const N = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 10_000)
  const snapDir = process.argv.find((a) => a.startsWith('--heap-snapshots='))?.split('=')[1]
  const dir = tempDir('svc-bench-memory-')
  const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`)
  log(`memory per connected screen, N = ${N}; load average ${await loadAvg()}`)

  // The screens, as pairing leaves them, written before the cloud starts.
  const dbFile = join(dir, 'svc.sqlite')
  const seedDb = await openDatabase(testConfig({ dataDir: dir, dbFile }))
  await migrate(seedDb)
  await seedDb.close()
  const preload = [join(ROOT, 'bench', 'lib', 'gc-signal.mjs'), ...(snapDir ? [join(ROOT, 'bench', 'lib', 'heap-signal.mjs')] : [])]
  const metricsPort = await freePort()
  const env = cloudEnv(dir, await freePort(), await freePort(), {
    SVC_RATE_LIMIT: '100000000',
    SVC_METRICS_PORT: String(metricsPort),
    SVC_LOG_LEVEL: 'warn',
    BENCH_MEMORY_FILE: join(dir, 'memory-cloud.json'),
    NODE_OPTIONS: [process.env.NODE_OPTIONS ?? '', ...preload.map((f) => `--import ${f}`)].join(' ').trim(),
    ...(snapDir ? { BENCH_HEAP_DIR: snapDir } : {}),
    // BENCH_MALLOC_ARENA_MAX=<n>: glibc's MALLOC_ARENA_MAX for the cloud (an operator setting, docs/operator-guide.md).
    ...(process.env.BENCH_MALLOC_ARENA_MAX ? { MALLOC_ARENA_MAX: process.env.BENCH_MALLOC_ARENA_MAX } : {}),
  })
  const ws = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench'])) as { workspaceId: string }
  const db = await openDatabase(testConfig({ dataDir: dir, dbFile }))
  const at = new Date().toISOString()
  for (let i = 0; i < N; i += 500)
    await db.kysely
      .insertInto('screens')
      .values(
        Array.from({ length: Math.min(500, N - i) }, (_, j) =>
          screenRow(idOf(i + j), ws.workspaceId, at, {
            name: `Screen ${i + j}`,
            model: 'bench',
            serial_number: `SN${i + j}`,
            device_secret_hash: hashSecret(secretOf(i + j)),
          }),
        ),
      )
      .execute()
  await db.close()
  log(`seeded ${N} screens`)

  const cloud = await startCloud(env, join(dir, 'cloud.log'))
  const pid = cloud.proc.pid!
  const want = N + 2000
  const has = raiseNofile(pid, want)
  if (has < want) {
    log(`stopped: the cloud's open-files limit is ${has}, ${N} connections need about ${want} (raise it: prlimit --nofile, LimitNOFILE)`)
    await stop(cloud.proc)
    return
  }
  await settle(pid, 300_000)
  let snaps = 0
  const snapshot = async (label: string) => {
    if (!snapDir) return
    const file = join(snapDir, `${++snaps}.heapsnapshot`)
    process.kill(pid, 'SIGWINCH')
    for (let tries = 0; !existsSync(file); tries++) {
      if (tries > 600) throw new Error(`no heap snapshot ${file} within 10 minutes`)
      await sleep(1000)
    }
    renameSync(file, join(snapDir, `${label}.heapsnapshot`))
    log(`heap snapshot: ${join(snapDir, `${label}.heapsnapshot`)}`)
  }
  const { rss: idle, heap: idleHeap } = await steadyMemory(pid, join(dir, 'memory-cloud.json'))
  log(`idle (no device connected): RSS ${f1(idle / 1048576)} MiB`)
  await snapshot(`idle-${N}`)

  const t0 = now()
  const { procs, desired, bytes } = await connectFleet(N, `mqtt://127.0.0.1:${cloud.mqttPort}`)
  log(`${N} connected and subscribed in ${f1((now() - t0) / 1000)} s`)
  for (let tries = 0; desired() < N; tries++) {
    if (tries > 600) throw new Error(`only ${desired()} of ${N} devices got a desired state within 10 minutes`)
    await sleep(1000)
  }
  log(`every device holds its desired state`)
  await settle(pid, 300_000)
  const { rss: connected, heap: connectedHeap } = await steadyMemory(pid, join(dir, 'memory-cloud.json'))
  await snapshot(`connected-${N}`)
  const per = (connected - idle) / N
  log(`connected: RSS ${f1(connected / 1048576)} MiB`)
  console.log(
    `N = ${N}: cloud RSS idle ${f1(idle / 1048576)} MiB, connected ${f1(connected / 1048576)} MiB; ${f1(per / 1024)} KiB per connected screen (target ≤ 10 KiB); ${perHeap(idleHeap, connectedHeap, N)}; load average ${await loadAvg()}`,
  )
  // The /metrics scrape at N connected (issue 49's figure), after the memory readings: the
  // first takes the metrics lease, then SCRAPES timed one after another to the last byte.
  const scrape = async () => {
    const s0 = now()
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
    const body = await res.text()
    if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`)
    return { ms: now() - s0, body }
  }
  await scrape()
  const times: number[] = []
  let body = ''
  for (let i = 0; i < 30; i++) {
    const s = await scrape()
    times.push(s.ms)
    body = s.body
  }
  const conns = Number(/^svc_mqtt_connections (\S+)$/m.exec(body)?.[1])
  times.sort((a, b) => a - b)
  console.log(
    `N = ${N}: GET /metrics (30 scrapes) p50 ${f1(times[15]!)} ms, p95 ${f1(times[28]!)} ms, max ${f1(times[29]!)} ms; svc_mqtt_connections ${conns} (target ≤ 50 ms)`,
  )
  for (const p of procs) p.disconnect()
  await stop(cloud.proc)

  // ---- the floor: the same connections on a bare Aedes ----
  if (process.argv.includes('--no-bare')) return
  const bare = await bareFloor(N, bytes(), snapDir, log)
  console.log(
    `N = ${N}: bare Aedes RSS idle ${f1(bare.idle / 1048576)} MiB, connected ${f1(bare.connected / 1048576)} MiB; ${f1(bare.per / 1024)} KiB per connected screen (the floor); ${bare.heap}; product ${f1(per / 1024)} KiB, ${(per / bare.per).toFixed(2)}× the floor, ${f1((per - bare.per) / 1024)} KiB above it`,
  )
}

/**
 * RSS after a full GC (steadyRss) and process.memoryUsage() as gc-signal.mjs writes it after
 * that GC: the file is removed first and awaited (a busy process handles the signal late).
 */
async function steadyMemory(pid: number, file: string): Promise<{ rss: number; heap: NodeJS.MemoryUsage | null }> {
  rmSync(file, { force: true })
  const rss = await steadyRss(pid, 500)
  for (let tries = 0; tries < 120 && !existsSync(file); tries++) await sleep(500)
  await sleep(200) // written at once, but let the write finish
  try {
    return { rss, heap: JSON.parse(readFileSync(file, 'utf8')) as NodeJS.MemoryUsage }
  } catch {
    return { rss, heap: null }
  }
}

/** The V8 heap's and the external (Buffer) memory's growth per connection, for the RSS beside it. */
function perHeap(idle: NodeJS.MemoryUsage | null, connected: NodeJS.MemoryUsage | null, n: number): string {
  if (!idle || !connected) return 'heap not read'
  const kib = (a: number, b: number) => f1((b - a) / n / 1024)
  return `of which V8 heap used ${kib(idle.heapUsed, connected.heapUsed)} KiB, external ${kib(idle.external, connected.external)} KiB`
}

/** Starts device processes for [0, N) against `url`; resolves once all are connected and subscribed, with their desired counts. */
async function connectFleet(N: number, url: string): Promise<{ procs: ReturnType<typeof forkScript>[]; desired: () => number; bytes: () => number }> {
  const self = fileURLToPath(import.meta.url)
  const procs = Array.from({ length: Math.ceil(N / PER_PROCESS) }, () => forkScript(self, { BENCH_ROLE: 'devices' }))
  const counts = procs.map(() => 0)
  let bytes = 0
  await Promise.all(
    procs.map((p, i) => {
      const from = i * PER_PROCESS
      const to = Math.min(N, from + PER_PROCESS)
      const limit = raiseNofile(p.pid!, to - from + 1000)
      if (limit < to - from + 100) throw new Error(`stopped: a device process's open-files limit is ${limit}, ${to - from} connections need more`)
      return new Promise<void>((resolve, reject) => {
        p.on('message', (m: FromDevices) => {
          if (m.type === 'connected') resolve()
          else if (m.type === 'desired') {
            counts[i] = m.count
            bytes = m.bytes || bytes
          } else reject(new Error(`devices ${from}–${to}: ${m.message}`))
        })
        p.once('exit', (c) => reject(new Error(`a device process exited (${c})`)))
        p.send({ type: 'connect', url, from, to } satisfies ToDevices)
      })
    }),
  )
  return { procs, desired: () => counts.reduce((a, b) => a + b, 0), bytes: () => bytes }
}

/**
 * The floor: a bare Aedes (bench/lib/bare-aedes.ts: memory persistence, no authentication,
 * plain TCP as the product's listener here) with the same N connections doing the same
 * (Last Will, retained `online`, the two QoS 1 subscriptions), then one retained QoS 1
 * message per `desired` topic of the size the product's desired state has, as the product
 * holds one per screen. RSS after a full GC, idle and connected, as for the product.
 */
async function bareFloor(
  N: number,
  desiredBytes: number,
  snapDir: string | undefined,
  log: (s: string) => void,
): Promise<{ idle: number; connected: number; per: number; heap: string }> {
  const port = await freePort()
  const memFile = join(tempDir('svc-bench-bare-'), 'memory-bare.json')
  const preload = [join(ROOT, 'bench', 'lib', 'gc-signal.mjs'), ...(snapDir ? [join(ROOT, 'bench', 'lib', 'heap-signal.mjs')] : [])]
  const bare = forkScript(
    join(ROOT, 'bench', 'lib', 'bare-aedes.ts'),
    { BENCH_PORT: String(port), BENCH_MEMORY_FILE: memFile, ...(snapDir ? { BENCH_HEAP_DIR: snapDir } : {}) },
    preload.flatMap((f) => ['--import', f]),
  )
  await new Promise<void>((resolve, reject) => {
    bare.once('message', () => resolve())
    bare.once('exit', (c) => reject(new Error(`bare aedes exited (${c})`)))
  })
  const pid = bare.pid!
  const want = N + 2000
  const has = raiseNofile(pid, want)
  if (has < want) throw new Error(`stopped: the bare broker's open-files limit is ${has}, ${N} connections need about ${want}`)
  await sleep(1000)
  const { rss: idle, heap: idleHeap } = await steadyMemory(pid, memFile)
  log(`bare Aedes idle: RSS ${f1(idle / 1048576)} MiB`)
  const t0 = now()
  const fleet = await connectFleet(N, `mqtt://127.0.0.1:${port}`)
  log(`bare Aedes: ${N} connected and subscribed in ${f1((now() - t0) / 1000)} s`)
  // A payload of the size of the desired state the product's devices got.
  const published = new Promise<void>((resolve) => bare.once('message', () => resolve()))
  bare.send({ type: 'publish', topics: Array.from({ length: N }, (_, i) => topics.desired(idOf(i))), payloadBytes: desiredBytes, version: 1 })
  await published
  for (let tries = 0; fleet.desired() < N; tries++) {
    if (tries > 600) throw new Error(`bare Aedes: only ${fleet.desired()} of ${N} devices got a message within 10 minutes`)
    await sleep(1000)
  }
  await settle(pid, 300_000)
  const { rss: connected, heap: connectedHeap } = await steadyMemory(pid, memFile)
  const heap = perHeap(idleHeap, connectedHeap, N)
  if (snapDir) {
    process.kill(pid, 'SIGWINCH')
    const file = join(snapDir, '1.heapsnapshot')
    for (let tries = 0; !existsSync(file); tries++) {
      if (tries > 600) throw new Error(`no heap snapshot ${file} within 10 minutes`)
      await sleep(1000)
    }
    renameSync(file, join(snapDir, `bare-connected-${N}.heapsnapshot`))
  }
  for (const p of fleet.procs) p.disconnect()
  bare.send({ type: 'close' })
  await stop(bare, 'SIGTERM', 10_000)
  return { idle, connected, per: (connected - idle) / N, heap }
}

if (process.env.BENCH_ROLE === 'devices') devices()
else
  main()
    .catch((e) => {
      console.error(e)
      process.exitCode = 1
    })
    .finally(killAll)
