// The running server over real sockets: HTTP, MQTT over TCP and over WebSocket at /mqtt,
// the first measurement on start, a clean close, and the CLI's `start` ending on SIGTERM.
import t, { type Test } from 'tap'
import net from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { connect, type IClientOptions } from 'mqtt'
import WebSocket from 'ws'
import type { Running } from '../src/server.js'
import { testConfig } from '../src/config.js'
import { accepts, cleanEnv, cloudCli, freePort, startRunning, tempDir as newTempDir, until } from './fixtures/processes.js'

const tempDir = (t: Test) => newTempDir(t, 'svc-server-')

const start = (t: Test, dataDir = tempDir(t)): Promise<Running> =>
  startRunning(t, testConfig({ dataDir, dbFile: path.join(dataDir, 'svc.sqlite'), host: '127.0.0.1', httpPort: 0, mqttPort: 0, statusIntervalMs: 60_000 }))

/** Connects an MQTT client and reports how the broker answered. */
function mqttAttempt(url: string, opts: IClientOptions): Promise<{ connected: boolean; code?: number; message?: string }> {
  return new Promise((resolve) => {
    const client = connect(url, { reconnectPeriod: 0, connectTimeout: 5000, clientId: `test-${process.pid}-${Math.random().toString(36).slice(2)}`, ...opts })
    const done = (r: { connected: boolean; code?: number; message?: string }) => {
      client.end(true)
      resolve(r)
    }
    client.once('connect', () => done({ connected: true }))
    client.once('error', (err) => done({ connected: false, code: (err as { code?: number }).code, message: err.message }))
    client.once('close', () => done({ connected: false, message: 'closed' }))
  })
}

/**
 * What "promptly" means for a stop with idle connections open: a stop that waited on them would
 * be ended by the connections' own limits (the broker's 30 s for a CONNECT that never comes,
 * the HTTP keep-alive's 72 s) or the drain's 10 s; a stop that closes them ends long before.
 * Twenty seconds sits below the first of those and far above a stop on a busy machine.
 */
const HELD_MS = 20_000

t.test('listens on real sockets; the first measurement runs on start', async (t) => {
  const s = await start(t)
  t.type(s.httpPort, 'number')
  t.type(s.mqttPort, 'number')
  t.not(s.httpPort, 0)
  t.not(s.mqttPort, 0)
  const base = `http://127.0.0.1:${s.httpPort}`

  const res = await fetch(`${base}/v1/status`)
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^application\/json/)

  type Status = { data: { state: string; computedAt: string | null; stale: boolean } }
  const measured = await until(5 * 60_000, async () => {
    const body = (await (await fetch(`${base}/v1/status`)).json()) as Status
    return body.data.computedAt ? body.data : undefined
  })
  t.ok(measured, 'computedAt set after the first measurement')
  t.equal(measured?.state, 'operational', 'the real database and broker answered')
  t.equal(measured?.stale, false)

  const text = await fetch(`${base}/v1/status?format=text`)
  t.equal(text.status, 200)
  t.match(text.headers.get('content-type'), /^text\/plain/)
  t.match(await text.text(), /^state: operational$/m)

  const me = await fetch(`${base}/v1/me`)
  t.equal(me.status, 401, 'the rest still needs a credential')
})

t.test('MQTT with bad credentials is refused, over TCP and over WebSocket', async (t) => {
  const s = await start(t)
  for (const url of [`mqtt://127.0.0.1:${s.mqttPort}`, `ws://127.0.0.1:${s.httpPort}/mqtt`]) {
    const r = await mqttAttempt(url, { username: 'scr_nope', password: 'wrong' })
    t.equal(r.connected, false, `${url} refused`)
    t.ok(r.code === 4 || r.code === 5, `${url}: CONNACK refusal code ${r.code} (${r.message})`)
    const anonymous = await mqttAttempt(url, {})
    t.equal(anonymous.connected, false, `${url} refuses an anonymous client`)
  }
  // a WebSocket elsewhere on the HTTP server is not MQTT
  const stray = new WebSocket(`ws://127.0.0.1:${s.httpPort}/elsewhere`)
  const outcome = await new Promise<string>((resolve) => {
    stray.once('open', () => resolve('open'))
    stray.once('error', () => resolve('error'))
    stray.once('unexpected-response', () => resolve('refused'))
  })
  stray.terminate()
  t.not(outcome, 'open')
})

t.test('close() ends promptly with idle connections open, and the ports stop accepting', async (t) => {
  const s = await start(t)
  const httpPort = s.httpPort
  const mqttPort = s.mqttPort!
  t.ok(await accepts(httpPort))
  t.ok(await accepts(mqttPort))

  // connections that never send CONNECT (aedes would wait 30 s for it), and a keep-alive HTTP one
  const raw = net.connect(mqttPort, '127.0.0.1')
  await new Promise((r) => raw.once('connect', r))
  raw.on('error', () => undefined)
  const ws = new WebSocket(`ws://127.0.0.1:${httpPort}/mqtt`, 'mqtt')
  ws.on('error', () => undefined)
  await new Promise((r) => ws.once('open', r))
  t.equal((await fetch(`http://127.0.0.1:${httpPort}/v1/status`)).status, 200)
  const rawClosed = new Promise((r) => raw.once('close', r))
  const wsClosed = new Promise((r) => ws.once('close', r))

  const started = Date.now()
  const outcome = await Promise.race([s.close().then(() => 'closed'), sleep(HELD_MS, undefined, { ref: false }).then(() => 'timeout')])
  t.equal(outcome, 'closed', `close() took ${Date.now() - started} ms`)
  if (outcome !== 'closed') {
    raw.destroy()
    ws.terminate()
    return
  }
  await Promise.all([rawClosed, wsClosed])
  t.equal(await accepts(httpPort), false, 'HTTP port closed')
  t.equal(await accepts(mqttPort), false, 'MQTT port closed')
})

t.test('the CLI `start` serves, then exits 0 on SIGTERM', async (t) => {
  const dataDir = tempDir(t)
  const [httpPort, mqttPort] = [await freePort(), await freePort()]
  const env = cleanEnv({
    SVC_DATA_DIR: dataDir,
    SVC_HTTP_PORT: String(httpPort),
    SVC_MQTT_PORT: String(mqttPort),
    SVC_HOST: '127.0.0.1',
    SVC_LOG_LEVEL: 'warn',
    // A drain that waited on the idle connection would run past HELD_MS.
    SVC_DRAIN_TIMEOUT_MS: '600000',
  })
  const { child, output, exited } = cloudCli(t, ['start'], env)

  const ready = await until(5 * 60_000, async () => {
    if (child.exitCode !== null) return false
    const res = await fetch(`http://127.0.0.1:${httpPort}/v1/status`)
    return res.status === 200 ? true : undefined
  })
  t.equal(ready, true, `ready (output: ${output()})`)
  t.ok(await accepts(mqttPort), 'MQTT over TCP on SVC_MQTT_PORT')
  // an idle device-side connection must not hold the shutdown open
  const raw = net.connect(mqttPort, '127.0.0.1')
  raw.on('error', () => undefined)
  await new Promise((r) => raw.once('connect', r))

  child.kill('SIGTERM')
  const outcome = await Promise.race([exited, sleep(HELD_MS, undefined, { ref: false }).then(() => null)])
  raw.destroy()
  t.ok(outcome, `exited, not held by the idle connection (output: ${output()})`)
  t.same(outcome, { code: 0, signal: null })
  t.match(output(), /SIGTERM/)
  t.notMatch(output(), /^\s+at /m, 'no stack trace')
})
