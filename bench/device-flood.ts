// API writes while one device floods the broker (not a test), each piece in its own process:
//   pnpm exec tsx bench/device-flood.ts [--duration=10] [--callers=4] [--topic=reported|status]
//
// (a) bench/lib/bare-fastify.ts: a bare Fastify answering POST / (the JSON body back) and
//     GET /, loaded by the same callers, as the floor for this machine right now;
// (b) the product started as `pnpm start` starts it (its CLI, file SQLite database, default
//     log level written to a file, its API rate limit raised by its setting SVC_RATE_LIMIT),
//     two screens paired through the API as devices pair, a real PNG uploaded to cast. The
//     target screen is connected (mqtt.js, in this process) so each cast is delivered to it.
//     Then, for the given duration each:
//     1. quiet: `callers` callers in a closed loop, each `POST /v1/casts` (the PNG, on the
//        target screen) then `GET /v1/screens/<target>`, every answer timed;
//     2. flood: the same while bench/lib/flood-device.ts, in its own process, floods as the
//        other paired screen: a raw TCP socket writing pre-encoded QoS 0 PUBLISH packets as
//        fast as the socket takes them, connecting again at once whenever the broker closes it.
// Prints p50 / p99 / max per route and phase, and what the flooder managed to write. Every
// child process is killed at the end, also on failure.
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import mqtt from 'mqtt'
import {
  ROOT,
  call,
  cli,
  cloudEnv,
  expect,
  forkScript,
  freePort,
  killAll,
  loadAvg,
  pairOne,
  pct,
  sleep,
  startCloud,
  stop,
  tempDir,
  uploadImage,
  startBareFastify,
} from './lib/harness.js'

const arg = (name: string, def: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def
const D = Number(arg('duration', '10'))
const C = Number(arg('callers', '4'))
const TOPIC = arg('topic', 'reported')

type Timed = Record<string, number[]>

/** `C` callers in a closed loop for `seconds`: each runs `steps` in turn, every step timed under its name. */
async function load(seconds: number, steps: { name: string; run: () => Promise<void> }[]): Promise<Timed> {
  const out: Timed = Object.fromEntries(steps.map((s) => [s.name, [] as number[]]))
  const end = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (performance.now() < end)
        for (const s of steps) {
          const t0 = performance.now()
          await s.run()
          out[s.name]!.push(performance.now() - t0)
        }
    }),
  )
  return out
}

const ms = (n: number) => `${n < 10 ? n.toFixed(1) : Math.round(n)} ms`
function row(label: string, xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b)
  return `| ${label} | ${s.length} | ${ms(pct(s, 50))} | ${ms(pct(s, 99))} | ${ms(s[s.length - 1] ?? 0)} |`
}

interface FloodStats {
  messages: number
  bytes: number
  connects: number
  closes: number
}

async function main(): Promise<void> {
  const dir = tempDir('svc-bench-flood-')
  try {
    console.log(`${C} callers, ${D} s per phase, flood topic ${TOPIC}; load average ${await loadAvg()}`)
    // (a) bare Fastify
    const { proc: bare, port: bport } = await startBareFastify()
    const bareBase = `http://127.0.0.1:${bport}`
    const bareSteps = [
      { name: 'POST', run: async () => void expect(await call(`${bareBase}/`, { method: 'POST', body: { contentKind: 'media' } }), 200, 'bare POST') },
      { name: 'GET', run: async () => void expect(await call(`${bareBase}/`), 200, 'bare GET') },
    ]
    await load(1, bareSteps)
    const bareTimes = await load(D, bareSteps)
    await stop(bare)

    // (b) the product
    const env = cloudEnv(dir, await freePort(), await freePort(), { SVC_RATE_LIMIT: '1000000000' })
    const { apiKey } = JSON.parse(await cli(env, ['bootstrap', '--workspace', 'Bench'])) as { apiKey: string }
    const cloud = await startCloud(env, join(dir, 'cloud.log'))
    const started = performance.now()
    const flooder = await pairOne(cloud.base, apiKey, 0, 'Flooder')
    const target = await pairOne(cloud.base, apiKey, 1, 'Target')
    const mediaId = await uploadImage(cloud.base, apiKey)
    const device = await mqtt.connectAsync(`mqtt://127.0.0.1:${cloud.mqttPort}`, {
      clientId: target.screenId,
      username: target.screenId,
      password: target.deviceSecret,
      protocolVersion: 4,
      clean: false,
      reconnectPeriod: 1000,
    })
    await device.subscribeAsync([`svc/v1/screens/${target.screenId}/desired`, `svc/v1/screens/${target.screenId}/jobs`], { qos: 1 })
    const auth = { authorization: `Bearer ${apiKey}` }
    const steps = [
      {
        name: 'POST /v1/casts',
        run: async () =>
          void expect(
            await call(`${cloud.base}/v1/casts`, {
              method: 'POST',
              headers: auth,
              body: { contentKind: 'media', contentId: mediaId, scopeKind: 'screens', screenIds: [target.screenId] },
            }),
            201,
            'cast',
          ),
      },
      {
        name: `GET /v1/screens/<id>`,
        run: async () => void expect(await call(`${cloud.base}/v1/screens/${target.screenId}`, { headers: auth }), 200, 'screen'),
      },
    ]
    // Warm-up: route schemas compiled (the background compilation starts 5 s after listening,
    // SVC_SCHEMA_WARMUP_MS), connections open, then a few seconds of the load itself.
    await sleep(Math.max(0, 7000 - (performance.now() - started)))
    await load(3, steps)
    const quiet = await load(D, steps)

    const attacker = forkScript(join(ROOT, 'bench', 'lib', 'flood-device.ts'), {
      BENCH_MQTT_PORT: String(cloud.mqttPort),
      BENCH_SCREEN_ID: flooder.screenId,
      BENCH_SECRET: flooder.deviceSecret,
      BENCH_TOPIC: TOPIC,
    })
    let stats: FloodStats = { messages: 0, bytes: 0, connects: 0, closes: 0 }
    const flooding = new Promise<void>((resolve, reject) => {
      attacker.on('message', (m: { type: string } & FloodStats) => {
        if (m.type === 'flooding') resolve()
        else if (m.type === 'stats') stats = m
      })
      attacker.once('exit', (c) => reject(new Error(`the flooder exited (${c})`)))
    })
    await flooding
    const floodStart = performance.now()
    const flood = await load(D, steps)
    const floodSeconds = (performance.now() - floodStart) / 1000
    const last = new Promise<void>((resolve) => attacker.on('message', (m: { type: string }) => m.type === 'stats' && resolve()))
    attacker.send({ type: 'stop' })
    await Promise.race([last, new Promise((r) => setTimeout(r, 2000))])
    await stop(attacker)
    await device.endAsync(true)
    await stop(cloud.proc)

    console.log('')
    console.log(`device flood, SQLite, ${C} callers in a closed loop, ${D} s per phase (load average at the end: ${await loadAvg()})`)
    console.log('| route, phase | answers | p50 | p99 | max |')
    console.log('| --- | --- | --- | --- | --- |')
    console.log(row('bare Fastify POST / (JSON body back)', bareTimes.POST!))
    console.log(row('bare Fastify GET /', bareTimes.GET!))
    for (const [phase, t] of [
      ['quiet', quiet],
      ['during the flood', flood],
    ] as const)
      for (const s of steps) console.log(row(`${s.name}, ${phase}`, t[s.name]!))
    console.log('')
    console.log(
      `flooder (${TOPIC}, QoS 0, ${Math.round(stats.bytes / stats.messages)} bytes a message): ${stats.messages.toLocaleString('en')} messages handed to its socket in ${floodSeconds.toFixed(1)} s (${Math.round(stats.messages / floodSeconds).toLocaleString('en')}/s), ${(stats.bytes / 1e6).toFixed(1)} MB; ${stats.connects} connections accepted, ${stats.closes} closed by the cloud (what a cut connection had not been read of is lost in its socket buffers)`,
    )
  } finally {
    killAll()
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    killAll()
    process.exit(1)
  },
)
