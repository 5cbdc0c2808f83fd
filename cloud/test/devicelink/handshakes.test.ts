// Connections to the MQTT listeners that never finish their handshake (no TLS ClientHello,
// no CONNECT) through real sockets: each is closed at its deadline, at most so many are held
// per remote address and in all, and a cloud started with fewer file descriptors (1024) than the
// stalled connections thrown at it keeps answering HTTP. The loopback range gives the
// connections distinct remote addresses (127.0.0.2, 127.0.0.3, …).
import t from 'tap'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import tls from 'node:tls'
import { ManualClock } from '@svc/shared'
import { EmbeddedBroker } from '../../src/platform/broker/EmbeddedBroker.js'
import { TLS_DIR } from '../fixtures/receiver.js'
import { cleanEnv, freePort, spawnProcess, tempDir, until } from '../fixtures/processes.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const fixture = (name: string): string => path.join(TLS_DIR, name)
const CA = fs.readFileSync(fixture('ca.pem'), 'utf8')

/** A hang guard: rejects with what was awaited when `ms` passes first. */
function guard<T>(what: string, p: Promise<T>, ms = 5 * 60_000): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms for: ${what}`)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

interface Stalled {
  socket: net.Socket
  /** Resolves when the server closes it (the client never does). */
  closed: Promise<void>
  /** Whether it was closed before `settle` answered. */
  isClosed(): boolean
}

/**
 * A TCP connection from `localAddress` that sends nothing: a stalled TLS or MQTT handshake.
 * TCP keepalive probes it after a second of silence: a connection the server holds answers
 * them, one the kernel dropped from a full accept queue (which the client is never told of)
 * is reset, so the test learns of it instead of waiting for ever.
 */
function stall(port: number, localAddress: string): Stalled {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress })
  socket.setKeepAlive(true, 1000)
  socket.on('error', () => undefined)
  let isClosed = false
  const closed = new Promise<void>((r) =>
    socket.once('close', () => {
      isClosed = true
      r()
    }),
  )
  return { socket, closed, isClosed: () => isClosed }
}

/** Resolves once the connection is up (or closed before). */
const connected = (s: Stalled): Promise<void> =>
  new Promise((r) => (s.socket.readyState === 'open' ? r() : (s.socket.once('connect', () => r()), s.closed.then(r))))

/** One TLS handshake; answers whether it completed. */
function handshake(port: number, localAddress: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({ socket: net.connect({ host: '127.0.0.1', port, localAddress }), servername: 'localhost', ca: [CA] })
    socket.once('secureConnect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
    socket.once('close', () => resolve(false))
  })
}

t.test('stalled handshakes: at most so many per address and in all, the rest closed at once, each closed at its deadline (injected clock)', async (t) => {
  const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'))
  const HANDSHAKE_TIMEOUT_MS = 10_000 // on the injected clock
  const broker = new EmbeddedBroker(undefined, { timers: clock, handshake: { timeoutMs: HANDSHAKE_TIMEOUT_MS, perAddress: 3, total: 5 } })
  await broker.start()
  t.teardown(() => broker.close())
  const mqttsPort = await broker.listenTls(0, '127.0.0.1', { certFile: fixture('server.pem'), keyFile: fixture('server-key.pem') })
  const tcpPort = await broker.listenTcp(0, '127.0.0.1')

  // Four from one address over TLS: the fourth is over the per-address limit.
  const a = [0, 1, 2, 3].map(() => stall(mqttsPort, '127.0.0.2'))
  await guard('the connections from 127.0.0.2 to be accepted', Promise.all(a.map(connected)))
  await guard(
    'the fourth from 127.0.0.2 to be closed',
    until(5 * 60_000, () => (a.filter((s) => s.isClosed()).length === 1 ? true : undefined)),
  )
  t.same(
    a.map((s) => s.isClosed()),
    [false, false, false, true],
    'three held from one address, the fourth closed at once',
  )
  t.equal(broker.handshakes.inHandshake, 3)

  // Plain MQTT over TCP counts too: two from another address reach the total of five, a third is closed.
  const b = [0, 1, 2].map(() => stall(tcpPort, '127.0.0.3'))
  await guard('the connections from 127.0.0.3 to be accepted', Promise.all(b.map(connected)))
  await guard(
    'the third from 127.0.0.3 to be closed',
    until(5 * 60_000, () => (b.filter((s) => s.isClosed()).length === 1 ? true : undefined)),
  )
  t.equal(broker.handshakes.inHandshake, 5, 'five in handshake, the total')
  t.equal(await handshake(mqttsPort, '127.0.0.4'), false, 'a handshake from a new address is refused while the total is reached')
  t.equal(broker.handshakes.stats.refused, 3)

  // The deadline: every held one is closed when the clock passes it, none before.
  clock.advance(9_999)
  t.equal(broker.handshakes.inHandshake, 5, 'none closed before the deadline')
  clock.advance(1)
  await guard('every stalled connection to be closed at its deadline', Promise.all([...a, ...b].map((s) => s.closed)))
  t.equal(broker.handshakes.stats.timedOut, 5, 'the five held ones closed at the deadline')
  t.equal(broker.handshakes.inHandshake, 0)
  t.equal(await handshake(mqttsPort, '127.0.0.4'), true, 'once they are gone, a new handshake completes')
})

t.test('a cloud with 1024 file descriptors keeps answering HTTP under 1100 stalled TLS handshakes, and closes them all', async (t) => {
  // Starting the cloud from its bundle (built first when the sources changed) and the flood.
  const [httpPort, mqttsPort] = [await freePort(), await freePort()]
  const env = cleanEnv({
    SVC_DATA_DIR: tempDir(t),
    SVC_HOST: '127.0.0.1',
    SVC_HTTP_PORT: String(httpPort),
    SVC_MQTT_PORT: '-1',
    SVC_MQTT_TLS_CERT: fixture('server.pem'),
    SVC_MQTT_TLS_KEY: fixture('server-key.pem'),
    SVC_MQTTS_PORT: String(mqttsPort),
    SVC_MQTT_HANDSHAKE_TIMEOUT_MS: '3000',
    SVC_LOG_LEVEL: 'warn',
  })
  // The cloud's bundle, as `pnpm start` runs it, with its open-file limit lowered; the
  // handshake limits are the defaults.
  const cloud = spawnProcess(t, 'prlimit', ['--nofile=1024', process.execPath, 'scripts/cloud.mjs', 'start'], env)
  const status = (): Promise<number> => fetch(`http://127.0.0.1:${httpPort}/v1/status`, { signal: AbortSignal.timeout(HANG_GUARD_MS) }).then((r) => r.status)
  // A hang guard: a first start builds the bundle, which on a machine busy with the rest of the
  // suite has taken over two minutes.
  const START_GUARD_MS = HANG_GUARD_MS
  const ready = await until(START_GUARD_MS, async () => (cloud.child.exitCode !== null ? false : (await status()) === 200 ? true : undefined), 200)
  t.equal(ready, true, `the cloud is up (output: ${cloud.output()})`)

  // 1100 connections that never send a ClientHello, 55 from each of 20 addresses.
  const stalled: Stalled[] = []
  t.teardown(() => {
    for (const s of stalled) s.socket.destroy()
  })
  for (let i = 0; i < 20; i++) for (let j = 0; j < 55; j++) stalled.push(stall(mqttsPort, `127.0.0.${10 + i}`))
  await guard('every stalled connection to be accepted or closed', Promise.all(stalled.map(connected)))
  // The kernel completes a connection before the cloud accepts it: once the cloud has taken
  // them all, every one over the default limit of 256 in handshake has been closed.
  await guard(
    'the cloud to close the stalled handshakes over its limit of 256',
    until(5 * 60_000, () => (stalled.filter((s) => s.isClosed()).length >= stalled.length - 256 ? true : undefined)),
  )
  t.ok(stalled.filter((s) => s.isClosed()).length >= stalled.length - 256, 'at most 256 held')
  const answered = await guard(
    'an HTTP answer while the stalled handshakes are open',
    status().catch((e: Error) => `no answer: ${e.message}`),
  )
  t.equal(answered, 200, 'HTTP answers')
  await guard('the server to close every stalled handshake', Promise.all(stalled.map((s) => s.closed)))
  t.pass('every stalled handshake was closed by the cloud')
  t.equal(await status(), 200, 'HTTP still answers afterwards')
  t.notMatch(cloud.output(), /EMFILE/, 'no file-descriptor exhaustion logged')
})
