// `GET /metrics` scrape time at N connected screens (not a test): the cloud started as
// `pnpm start` starts it (its CLI, a file SQLite database) with SVC_METRICS_PORT set; N
// screens paired through the API as devices pair; N devices (mqtt.js, their own
// credentials) connected 100 at a time; then SAMPLES scrapes one after another, each timed
// from the request to the last byte, and the body checked (svc_mqtt_connections = N,
// svc_screens online = N). The first scrape takes the metrics lease; the others renew it.
//   pnpm exec tsx bench/metrics-scrape.ts [N=1000] [SAMPLES=50]
import { connectAsync, type MqttClient } from 'mqtt'
import {
  call,
  cli,
  cloudEnv,
  countOnline,
  expect,
  f1,
  freePort,
  killAll,
  loadAvg,
  now,
  pairMany,
  pct,
  rssOf,
  sleep,
  startCloud,
  stop,
  tempDir,
} from './lib/harness.js'

const N = Number(process.argv[2] ?? 1000)
const SAMPLES = Number(process.argv[3] ?? 50)

async function scrape(port: number): Promise<{ ms: number; body: string }> {
  const t0 = now()
  const res = await fetch(`http://127.0.0.1:${port}/metrics`)
  const body = await res.text()
  const ms = now() - t0
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`)
  return { ms, body }
}

const gauge = (body: string, line: RegExp): number => Number(body.match(line)?.[1] ?? Number.NaN)

try {
  const dir = tempDir('svc-bench-metrics-')
  const [httpPort, mqttPort, metricsPort] = [await freePort(), await freePort(), await freePort()]
  const env = cloudEnv(dir, httpPort, mqttPort, {
    SVC_METRICS_PORT: String(metricsPort),
    SVC_LOG_LEVEL: 'warn',
    SVC_RATE_LIMIT: '100000000',
    // 100 connections at a time from one address: past the default per-address bound on
    // handshakes (32), which at a high load closes some before they finish (ECONNRESET).
    SVC_MQTT_HANDSHAKES_PER_ADDRESS: '256',
    SVC_MQTT_HANDSHAKE_TIMEOUT_MS: '120000',
  })
  const { apiKey } = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench'])) as { apiKey: string }
  const cloud = await startCloud(env, `${dir}/cloud.log`)
  console.log(`metrics scrape, ${N} screens, ${SAMPLES} samples; load average ${await loadAvg()}`)
  const empty = await scrape(metricsPort)
  console.log(`  no device connected: ${f1(empty.ms)} ms, ${(empty.body.length / 1024).toFixed(1)} KiB`)

  const paired = await pairMany(cloud.base, apiKey, N, 16, (done) => console.log(`  paired ${done}`))
  const clients: MqttClient[] = []
  for (let i = 0; i < N; i += 100) {
    const batch = await Promise.all(
      paired.slice(i, i + 100).map((p) =>
        connectAsync(`mqtt://127.0.0.1:${mqttPort}`, {
          clientId: p.screenId,
          username: p.screenId,
          password: p.deviceSecret,
          protocolVersion: 4,
          clean: false,
          reconnectPeriod: 0,
          connectTimeout: 60_000,
        }),
      ),
    )
    clients.push(...batch)
  }
  for (let tries = 0; (await countOnline(cloud.base, apiKey)).online < N; tries++) {
    if (tries > 600) throw new Error('not every screen came online within a minute')
    await sleep(100)
  }
  // Let the connect storm's work settle before timing.
  await sleep(2000)
  const times: number[] = []
  let last = ''
  for (let i = 0; i < SAMPLES; i++) {
    const s = await scrape(metricsPort)
    times.push(s.ms)
    last = s.body
  }
  const connections = gauge(last, /^svc_mqtt_connections (\S+)$/m)
  const online = gauge(last, /^svc_screens\{status="online",scope="cloud"\} (\S+)$/m)
  if (connections !== N || online !== N) throw new Error(`the scrape says ${connections} connections, ${online} online; expected ${N}`)
  times.sort((a, b) => a - b)
  console.log(
    `  ${N} connected: p50 ${f1(pct(times, 50))} ms, p95 ${f1(pct(times, 95))} ms, max ${f1(times.at(-1)!)} ms, ${(last.length / 1024).toFixed(1)} KiB`,
  )
  console.log(`  cloud RSS ${(rssOf(cloud.proc.pid!) / 1024 / 1024).toFixed(0)} MiB; load average ${await loadAvg()}`)
  expect(await call(`${cloud.base}/v1/status`), 200, 'status')
  await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)))
  await stop(cloud.proc)
} finally {
  killAll()
}
