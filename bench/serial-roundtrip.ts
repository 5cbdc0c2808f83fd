// API → panel → result round trip of one serial command over the real stack:
// HTTP POST /v1/screens/<id>/serial → embedded broker → MQTT device running the agent's own
// job path (JobDispatcher + SeenJobs + SerialJobRunner + DisplayDriver) → socat pty →
// simulated panel → job result → GET /v1/serial-jobs/<id> shows `ok`.
// Two panels: Samsung MDC (framed both ways: the command and the reply end on their own
// length, so nobody waits for silence) and a raw echo (each side ends a message on silence:
// the raw protocol's own timing). Compared with the wire time of the command and the reply
// at 9600 baud 8N1 (10 bits a byte), which a pty does not impose.
// Legs (medians): the driver alone (driver → pty → panel → driver), and inside the round
// trip: POST answered; job at the device; driver started (the agent's own work: dedupe record);
// driver; result published; result stored; GET sees it.
// A third row, HDMI-CEC: a power command (on: Image View On then Active Source; standby) to a
// simulated Pulse-Eight adapter with a TV behind it, then Give Device Power Status until the
// TV reads what was asked — the operating hours' command and read-back — median and p99.
// Run: npx tsx bench/serial-roundtrip.ts [iterations=50] [--poll-ms=2]
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { connect } from 'mqtt'
import { topics } from '../shared/src/mqtt/index.js'
import { Cec, encodeMdcCommand } from '../shared/src/panels/index.js'
import { SimulatedPanel, PtyTransport } from '../firmware-sim/src/index.js'
import { buildApp, servicesOf } from '../cloud/src/app.js'
import { startServer } from '../cloud/src/server.js'
import { testConfig } from '../cloud/src/config.js'
import { DisplayDriver, SerialJobRunner } from '../agent/src/serial/index.js'
import { JobDispatcher, SeenJobs, silentLogger } from '../agent/src/index.js'
import { createApiClient, ok } from '../cloud/src/client/index.js'
import { loadAvg } from './lib/harness.js'

const pollArg = process.argv.find((a) => a.startsWith('--poll-ms='))
const POLL_MS = pollArg ? Number(pollArg.split('=')[1]) : 2
const N = Number(process.argv.filter((a) => !a.startsWith('--'))[2] ?? 50)
const RAW_SILENCE_MS = 15
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
const ws = await servicesOf(pre).workspaces.create('Bench', 'us')
const key = (await servicesOf(pre).apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')).secret
await pre.close()

const server = await startServer(config)
const base = `http://127.0.0.1:${server.httpPort}`
const api = createApiClient(base, key)
const reg = (await ok(createApiClient(base, null).POST('/v1/devices/register', { body: {} }))).data
const screenId = (await ok(api.POST('/v1/screens/pair', { body: { code: reg.pairingCode, name: 'Bench' } }))).data.id
const secret = (await ok(createApiClient(base, reg.pollSecret).GET('/v1/devices/register/{id}', { params: { path: { id: reg.registrationId } } }))).data
  .deviceSecret

// Timestamps of the legs of the job in flight.
const marks: Record<string, number> = {}
const mark = (k: string) => (marks[k] = performance.now())
const jobs = servicesOf(server.app).serialJobs
const applyResult = jobs.applyResult.bind(jobs)
jobs.applyResult = async (...args) => {
  const r = await applyResult(...args)
  mark('stored')
  return r
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!
  return { median: q(0.5), p95: q(0.95), p99: q(0.99), min: s[0]! }
}
const fmt = (xs: number[]) => {
  const s = stats(xs)
  return `median ${s.median.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, min ${s.min.toFixed(1)} ms`
}

async function run(protocol: 'samsung-mdc' | 'raw', cmd: Buffer, replyBytes: number): Promise<void> {
  const panel = new SimulatedPanel({ protocol })
  const pty = new PtyTransport(panel)
  await pty.start()
  const driver = new DisplayDriver({ path: pty.hostPath, protocol: protocol === 'raw' ? null : protocol, rawSilenceMs: RAW_SILENCE_MS, timeoutMs: 1000 })
  await driver.start()
  const timed: Pick<DisplayDriver, 'send'> = {
    send: async (bytes, opts) => {
      mark('driverStart')
      const r = await driver.send(bytes, opts)
      mark('driverEnd')
      return r
    },
  }
  const agentDir = fs.mkdtempSync(path.join(dir, 'agent-'))
  const device = connect(`mqtt://127.0.0.1:${server.mqttPort}`, { clientId: screenId, username: screenId, password: secret, clean: false })
  await new Promise<void>((r) => device.once('connect', () => r()))
  // As the agent's MqttLink does: no Nagle on the device's socket.
  ;(device.stream as { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true)
  const dispatcher = new JobDispatcher({
    seen: new SeenJobs({ dataDir: agentDir }),
    serial: new SerialJobRunner(timed),
    publisher: {
      publish: async (kind, message) => {
        mark('published')
        await device.publishAsync(topics.jobResults(screenId), JSON.stringify(message), { qos: 1 })
      },
    },
    log: silentLogger,
    clock: { now: () => new Date() },
  })
  await dispatcher.start()
  device.on('message', (_topic, payload) => {
    mark('atDevice')
    void dispatcher.handle(payload)
  })
  await device.subscribeAsync(topics.jobs(screenId), { qos: 1 })

  // 1) the driver alone
  const direct: number[] = []
  for (let i = 0; i < N; i++) {
    const t0 = performance.now()
    const r = await driver.send(cmd)
    if (r.outcome !== 'ok') throw new Error(`direct: ${r.outcome} ${r.reason ?? ''}`)
    direct.push(performance.now() - t0)
  }

  // 2) the whole path, with its legs
  const legs = {
    posted: [] as number[],
    atDevice: [] as number[],
    agent: [] as number[],
    driver: [] as number[],
    published: [] as number[],
    stored: [] as number[],
    seen: [] as number[],
  }
  const full: number[] = []
  const value = cmd.toString('hex')
  for (let i = 0; i < N; i++) {
    for (const k of Object.keys(marks)) delete marks[k]
    const t0 = performance.now()
    const job = (
      await ok(
        api.POST('/v1/screens/{id}/serial', {
          params: { path: { id: screenId } },
          body: { value, encoding: 'hex', protocol: protocol === 'raw' ? 'raw' : protocol },
        }),
      )
    ).data
    const posted = performance.now()
    for (;;) {
      const j = (await ok(api.GET('/v1/serial-jobs/{id}', { params: { path: { id: job.id } } }))).data
      if (j.status === 'ok') break
      if (!['queued', 'sent'].includes(j.status)) throw new Error(`job ${j.status} ${j.reason ?? ''}`)
      if (POLL_MS > 0) await new Promise((r) => setTimeout(r, POLL_MS))
    }
    const end = performance.now()
    full.push(end - t0)
    legs.posted.push(posted - t0)
    legs.atDevice.push(marks.atDevice! - t0)
    legs.agent.push(marks.driverStart! - marks.atDevice!)
    legs.driver.push(marks.driverEnd! - marks.driverStart!)
    legs.published.push(marks.published! - marks.driverEnd!)
    legs.stored.push(marks.stored! - marks.published!)
    legs.seen.push(end - marks.stored!)
  }

  const wire = ((cmd.length + replyBytes) * 10 * 1000) / 9600
  const med = (xs: number[]) => stats(xs).median.toFixed(1)
  console.log(`${protocol}: ${cmd.length}-byte command, ${replyBytes}-byte reply, ${N} runs each`)
  console.log(`  wire time at 9600 8N1: ${wire.toFixed(1)} ms there and back (a pty adds none of it)`)
  console.log(
    `  driver → pty → panel → driver: ${fmt(direct)}${protocol === 'raw' ? ` (the panel's 30 ms and the driver's ${RAW_SILENCE_MS} ms silences end raw messages)` : ''}`,
  )
  console.log(`  API → broker → agent → panel → result → API: ${fmt(full)} (GET polled every ${POLL_MS} ms)`)
  console.log(
    `  legs (medians, ms): POST answered ${med(legs.posted)}; job at the device ${med(legs.atDevice)} after the POST began; driver started ${med(legs.agent)} after it; driver ${med(legs.driver)}; ` +
      `result published ${med(legs.published)} after it; stored ${med(legs.stored)} later; GET saw it ${med(legs.seen)} later`,
  )
  console.log(
    `  on a real 9600-baud line: about ${(stats(full).median + wire).toFixed(1)} ms (median + wire time); target ≤ wire + 50 = ${(wire + 50).toFixed(1)} ms`,
  )

  device.removeAllListeners('message')
  await dispatcher.stop()
  device.end(true)
  await driver.stop()
  await pty.stop()
  panel.close()
}

/** CEC: power command, then status reads until the TV reads what was asked (the hours' read-back). */
async function runCec(): Promise<void> {
  const panel = new SimulatedPanel({ protocol: 'cec', state: { id: 1, power: 'standby' } })
  const pty = new PtyTransport(panel)
  await pty.start()
  const driver = new DisplayDriver({ path: pty.hostPath, protocol: 'cec', timeoutMs: 1000 })
  await driver.start()
  const confirmed: number[] = []
  const commandOnly: number[] = []
  for (let i = 0; i < N; i++) {
    const want = i % 2 === 0 ? 'on' : 'standby'
    const t0 = performance.now()
    const r = await driver.send(want === 'on' ? Cec.powerOn(1) : Cec.powerOff(1))
    if (r.outcome !== 'ok') throw new Error(`cec: ${r.outcome} ${r.reason ?? ''}`)
    commandOnly.push(performance.now() - t0)
    for (;;) {
      const q = await driver.send(Cec.powerQuery(1))
      if (q.outcome !== 'ok') throw new Error(`cec read-back: ${q.outcome} ${q.reason ?? ''}`)
      if (q.reply?.power === want) break
    }
    confirmed.push(performance.now() - t0)
  }
  const s = stats(confirmed)
  console.log(`cec: Pulse-Eight adapter + TV (simulated) over a socat pty, ${N} power commands (on / standby alternately)`)
  console.log(`  command alone (on = 2 transmissions, standby = 1): ${fmt(commandOnly)}`)
  console.log(`  command → read-back confirmed: median ${s.median.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, min ${s.min.toFixed(1)} ms`)
  console.log(
    '  (a real CEC line adds its own time: a 2-byte message is about 53 ms on the wire — 4.5 ms start bit, 24 ms a byte — after 7-17 ms of signal-free time)',
  )
  await driver.stop()
  await pty.stop()
  panel.close()
}

console.log(`load average ${await loadAvg()}`)
// MDC "set volume 30" to panel id 1: AA 12 01 01 1E 32; the ACK is 8 bytes.
await run('samsung-mdc', encodeMdcCommand({ cmd: 0x12, id: 1, data: Uint8Array.of(30) }), 8)
await run('raw', Buffer.from('00010203040506070809', 'hex'), 10)
await runCec()

await server.close()
fs.rmSync(dir, { recursive: true, force: true })
