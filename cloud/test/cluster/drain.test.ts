// SIGTERM drains a real cloud process (the CLI `start` entry): it stops accepting HTTP and
// MQTT connections, closes its device connections (a real mqtt client sees its connection
// closed), lets a request in flight finish (answered, with `Connection: close`), gives up
// its work leases, and exits 0. A request that does not finish within SVC_DRAIN_TIMEOUT_MS
// is cut, and the process still exits 0 within that bound.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { connectAsync } from 'mqtt'
import { openDatabase } from '../../src/platform/db/open.js'
import { testConfig } from '../../src/config.js'
import { accepts, cleanEnv, cloudCli, freePort, tempDir as newTempDir, until as untilValue, type Proc } from '../fixtures/processes.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const tempDir = (t: Test) => newTempDir(t, 'svc-drain-')
const cli = (t: Test, args: string[], env: NodeJS.ProcessEnv): Proc => cloudCli(t, args, env)
const until = <T>(ms: number, fn: () => Promise<T | undefined> | T | undefined) => untilValue(ms, fn, 100)

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n'

/**
 * An HTTP request whose body is still on its way: headers and the first byte sent, the rest
 * when `finish()` is called. It asks for `100 Continue`, which the server sends when it has
 * read the headers and taken the request: `inFlight` resolves then. `response` is what the
 * server sent after that interim answer, until the connection closed.
 */
async function halfSentRequest(port: number): Promise<{ finish(): void; inFlight: Promise<void>; response: Promise<string> }> {
  const sock = net.connect(port, '127.0.0.1')
  await new Promise((r) => sock.once('connect', r))
  let data = ''
  let taken!: () => void
  const inFlight = new Promise<void>((r) => (taken = r))
  sock.setEncoding('utf8').on('data', (d: string) => {
    data += d
    if (data.startsWith(CONTINUE)) taken()
  })
  const response = new Promise<string>((resolve) => {
    const after = () => resolve(data.startsWith(CONTINUE) ? data.slice(CONTINUE.length) : data)
    sock.once('close', after)
    sock.once('error', after)
  })
  sock.write(
    `POST /v1/devices/register HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n{`,
  )
  return { finish: () => sock.write('}'), inFlight, response }
}

/** `p`, or null after HANG_GUARD_MS (a hang guard; the caller's assertion names what was awaited). */
const guarded = <T>(p: Promise<T>) => Promise.race([p, sleep(HANG_GUARD_MS, undefined, { ref: false }).then(() => null)])

/** A cloud process (`start`), after `bootstrap` made a workspace and its key when `withKey` (null otherwise). */
async function startCloud(t: Test, drainTimeoutMs: number, withKey = true) {
  const dataDir = tempDir(t)
  const [httpPort, mqttPort] = [await freePort(), await freePort()]
  const env = cleanEnv({
    SVC_DATA_DIR: dataDir,
    SVC_HTTP_PORT: String(httpPort),
    SVC_MQTT_PORT: String(mqttPort),
    SVC_LOG_LEVEL: 'info',
    SVC_DRAIN_TIMEOUT_MS: String(drainTimeoutMs),
    SVC_ALERT_INTERVAL_MS: '200',
  })
  let apiKey: string | null = null
  if (withKey) {
    const boot = cli(t, ['bootstrap', '--workspace', 'Drain'], env)
    t.same(await boot.exited, { code: 0, signal: null }, `bootstrap (${boot.output()})`)
    apiKey = (JSON.parse(boot.output().trim().split('\n').at(-1)!) as { apiKey: string }).apiKey
  }
  const proc = cli(t, ['start'], env)
  const ready = await until(5 * 60_000, async () => {
    if (proc.child.exitCode !== null) return false
    return (await fetch(`http://127.0.0.1:${httpPort}/v1/status`)).status === 200 ? true : undefined
  })
  t.equal(ready, true, `ready (${proc.output().slice(-500)})`)
  return { dataDir, httpPort, mqttPort, apiKey, proc }
}

t.test('SIGTERM: device connections closed, no new connections, the request in flight answered, leases released, exit 0', async (t) => {
  const c = await startCloud(t, 20_000)
  const base = `http://127.0.0.1:${c.httpPort}`
  const call = async (method: string, p: string, body?: unknown, token: string | null = c.apiKey) => {
    const res = await fetch(base + p, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return (await res.json()) as { data: any }
  }
  // A paired screen's device, connected over MQTT/TCP.
  const reg = (await call('POST', '/v1/devices/register', {}, null)).data
  await call('POST', '/v1/screens/pair', { code: reg.pairingCode, name: 'Lobby' })
  const dev = (await call('GET', `/v1/devices/register/${reg.registrationId}`, undefined, reg.pollSecret)).data
  const client = await connectAsync(`mqtt://127.0.0.1:${c.mqttPort}`, {
    clientId: dev.screenId,
    username: dev.screenId,
    password: dev.deviceSecret,
    protocolVersion: 4,
    clean: false,
    reconnectPeriod: 0,
    connectTimeout: 5000,
  })
  t.after(() => client.endAsync(true).catch(() => undefined))
  const deviceClosed = new Promise<number>((resolve) => client.once('close', () => resolve(Date.now())))
  const online = await until(5 * 60_000, async () => ((await call('GET', `/v1/screens/${dev.screenId}`)).data.status === 'online' ? true : undefined))
  t.equal(online, true, 'the screen is online')

  // Alert evaluation runs under a lease (every 200 ms here): this instance holds it.
  const db = await openDatabase(testConfig({ dataDir: c.dataDir, dbFile: path.join(c.dataDir, 'svc.sqlite') }))
  t.after(() => db.close())
  const leases = () => db.kysely.selectFrom('work_leases').select(['name', 'holder']).execute()
  t.ok(await until(5 * 60_000, async () => ((await leases()).some((l) => l.name === 'alerts') ? true : undefined)), 'the instance holds the alerts lease')

  const inflight = await halfSentRequest(c.httpPort)
  t.ok(await guarded(inflight.inFlight.then(() => true)), 'the server took the request (100 Continue; hang guard: HANG_GUARD_MS)')
  c.proc.child.kill('SIGTERM')

  // Before the request in flight is finished: the drain closes the devices first.
  const closedAt = await guarded(deviceClosed)
  t.ok(closedAt, 'the device sees its connection closed (hang guard: HANG_GUARD_MS) while a request is still in flight')
  t.equal(await accepts(c.mqttPort), false, 'no new MQTT connection is accepted')
  t.equal(await accepts(c.httpPort), false, 'no new HTTP connection is accepted')
  t.equal(c.proc.child.exitCode, null, 'the process waits for the request in flight')

  inflight.finish()
  const answer = await inflight.response
  t.match(answer, /^HTTP\/1\.1 201 /, `the request in flight is answered (${answer.slice(0, 80)})`)
  t.match(answer, /\r\nconnection: close\r\n/i, 'and its connection closed behind the answer')
  const outcome = await guarded(c.proc.exited)
  t.same(outcome, { code: 0, signal: null }, `exit 0 (${c.proc.output().slice(-800)})`)
  t.match(c.proc.output(), /received SIGTERM/)
  t.match(c.proc.output(), /"msg":"draining/)
  t.notMatch(c.proc.output(), /drain timeout/, 'nothing had to be cut')
  t.same(await leases(), [], 'the work leases are given up, so another instance takes the work at once')
  t.notOk(fs.existsSync(path.join(c.dataDir, 'svc.lock')), 'the data folder lock is released')
})

t.test('a request that does not finish is cut after SVC_DRAIN_TIMEOUT_MS, and the process still exits 0', async (t) => {
  // No key needed: the stuck request is a device registration.
  const c = await startCloud(t, 1500, false)
  const stuck = await halfSentRequest(c.httpPort)
  t.ok(await guarded(stuck.inFlight.then(() => true)), 'the server took the request (100 Continue; hang guard: HANG_GUARD_MS)')
  c.proc.child.kill('SIGTERM')
  const outcome = await guarded(c.proc.exited)
  t.same(outcome, { code: 0, signal: null }, `exit 0 (hang guard: HANG_GUARD_MS) (${c.proc.output().slice(-800)})`)
  t.equal(await stuck.response, '', 'the unfinished request got no answer (past the 100 Continue): its connection was cut')
  t.match(c.proc.output(), /drain timeout: cutting the HTTP connections still open/)
})
