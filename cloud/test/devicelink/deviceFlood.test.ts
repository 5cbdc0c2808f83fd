// A device flooding the broker as fast as its link allows (pre-encoded PUBLISH packets
// written to a raw socket, over TCP and over WebSocket): once over its message budget the
// broker stops reading its connection until the budget refills (the bytes read from its
// socket stop growing while the device keeps writing), and a device still over budget 2 s
// after it went over (on the budget's clock, a ManualClock here) is disconnected and
// counted. API writes made during the flood answer (timed loosely; the figure is in
// bench/device-flood.ts).
import { servicesOf } from '../../src/app.js'
import t, { type Test } from 'tap'
import net from 'node:net'
import { performance } from 'node:perf_hooks'
import { WebSocket } from 'ws'
import { topics } from '@svc/shared/mqtt/index'
import { startCloud, type Cloud, type Device } from './link.js'
import { connectPacket, publishPacket, RawDevice } from './rawDevice.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const status = (screenId: string) => publishPacket(topics.status(screenId), JSON.stringify({ status: 'online', at: '2026-06-01T12:00:00.000Z' }))

/** 64 KiB of PUBLISH packets, written again and again while the socket takes them. */
function floodChunk(screenId: string): Buffer {
  const one = status(screenId)
  return Buffer.concat(Array.from({ length: Math.ceil(65_536 / one.length) }, () => one))
}

/** Bytes the broker has read from this device's connection so far (the TCP socket under it, for WebSocket too). */
function bytesRead(c: Cloud, screenId: string): number {
  const aedes = servicesOf(c.running.app).broker.aedes as unknown as { clients: Record<string, { conn: net.Socket & { _socket?: net.Socket } } | undefined> }
  const conn = aedes.clients[screenId]?.conn
  if (!conn) return -1
  if (conn instanceof net.Socket) return conn.bytesRead
  // A WebSocket connection: aedes reads a stream over the ws socket; find the TCP socket the server holds.
  const wss = (servicesOf(c.running.app).broker as unknown as { wss: { clients: Set<{ _socket: net.Socket }> } }).wss
  return [...wss.clients].reduce((n, ws) => n + ws._socket.bytesRead, 0)
}

/** How often the waits below look again. */
const POLL_MS = 5

const until = async (what: string, pred: () => boolean, ms = HANG_GUARD_MS) => {
  for (const end = performance.now() + ms; !pred(); await new Promise((r) => setTimeout(r, POLL_MS)))
    if (performance.now() > end) throw new Error(`timed out: ${what}`)
}

/** A cast, timed, while the flood runs (the budget's clock is manual: the cast's own clock is the app's). */
async function castDuring(t: Test, c: Cloud): Promise<void> {
  const started = performance.now()
  const res = await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_a' })
  const ms = performance.now() - started
  t.equal(res.status, 201, 'POST /v1/casts answers during the flood')
  t.comment(`POST /v1/casts during the flood: ${ms.toFixed(1)} ms`)
  const got = await c.call('GET', `/v1/casts/${res.body.data.id}`)
  t.equal(got.status, 200)
}

/** Writes one chunk after another as fast as the link takes them; `write` answers false when it should wait for `drained`. */
class Flood {
  writes = 0
  private stopped = false
  constructor(
    private readonly write: () => boolean,
    private readonly drained: (go: () => void) => void,
    readonly closed: Promise<void>,
  ) {
    closed.then(() => this.stop())
    this.go()
  }
  private go(): void {
    while (!this.stopped) {
      this.writes++
      if (!this.write()) return this.drained(() => this.go())
    }
  }
  stop(): void {
    this.stopped = true
  }
}

async function checkFlood(t: Test, c: Cloud, d: Device, f: Flood): Promise<void> {
  const { broker } = servicesOf(c.running.app)
  const budget = broker.budget
  // The burst (200 messages) goes through, then the device is over budget and its reading pauses.
  await until('reading paused', () => budget.isPaused(d.screenId))
  t.equal(budget.stats.pauses, 1, 'reading paused once the burst is spent')
  // The device keeps writing; the broker reads nothing more from it while paused.
  // What the socket had already taken in when the pause began stays in its buffer (one read, bounded
  // by the stream's high-water mark); after that nothing more is read.
  const atPause = bytesRead(c, d.screenId)
  await new Promise((r) => setTimeout(r, 100))
  const before = bytesRead(c, d.screenId)
  const writes = f.writes
  await new Promise((r) => setTimeout(r, 300))
  t.ok(f.writes >= writes, 'the device kept writing (until its socket buffers filled)')
  t.equal(bytesRead(c, d.screenId), before, `no byte read from the device while paused (${before} bytes read in all)`)
  t.ok(before - atPause <= 256 * 1024, `at most one buffer's worth read after the pause began (${before - atPause} bytes)`)
  await castDuring(t, c)
  // One second of the rate refills the bucket: reading resumes (the messages read are judged), the device is over again at once.
  const judged = budget.stats.over
  c.clock.advance(1000)
  await until('paused again', () => budget.stats.pauses === 2)
  t.ok(budget.stats.over > judged, `reading resumed after the budget refilled (${budget.stats.over - judged} more messages over budget)`)
  t.equal(budget.stats.disconnects, 0, 'not disconnected before 2 s')
  // 2 s after it went over, still flooding: disconnected.
  c.clock.advance(1000)
  await f.closed
  t.equal(budget.stats.disconnects, 1, 'disconnected 2 s (budget clock) after it went over budget, counted')
}

t.test('a flood over TCP: reading paused while over budget, disconnected after 2 s', async (t) => {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_a' })
  const { broker } = servicesOf(c.running.app)
  broker.budget.clock = c.clock
  const d = await c.pair('Flooder')
  const dev = await RawDevice.open(c.running.mqttPort!)
  t.after(() => dev.drop())
  dev.send(connectPacket({ clientId: d.screenId, username: d.screenId, password: d.deviceSecret, clean: true, keepalive: 0 }))
  const connack = await dev.next(2)
  t.equal(connack.body[1], 0, 'connected')
  const chunk = floodChunk(d.screenId)
  const f = new Flood(
    () => dev.socket.write(chunk),
    (go) => dev.socket.once('drain', go),
    dev.closed,
  )
  t.after(() => f.stop())
  await checkFlood(t, c, d, f)
  // It may come back; a device that floods again is cut at its first message over budget.
  const again = await RawDevice.open(c.running.mqttPort!)
  t.after(() => again.drop())
  again.send(connectPacket({ clientId: d.screenId, username: d.screenId, password: d.deviceSecret, clean: true, keepalive: 0 }))
  t.equal((await again.next(2)).body[1], 0, 'it may reconnect')
  again.send(floodChunk(d.screenId))
  await again.closed
  t.equal(broker.budget.stats.disconnects, 2, 'still flooding: cut again at once')
})

t.test('a flood over WebSocket: the TCP socket under the stream stops being read, then the device is disconnected', async (t) => {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_a' })
  const { broker } = servicesOf(c.running.app)
  broker.budget.clock = c.clock
  const d = await c.pair('Flooder')
  const ws = new WebSocket(`ws://127.0.0.1:${c.running.httpPort}/mqtt`, 'mqtt')
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()))
  ws.on('error', () => undefined)
  t.after(() => ws.terminate())
  await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)))
  // The broker may write one packet in several messages: gather the first 4 bytes (CONNACK).
  let got = Buffer.alloc(0)
  const connack = new Promise<Buffer>((resolve) =>
    ws.on('message', (m) => {
      got = Buffer.concat([got, m as Buffer])
      if (got.length >= 4) resolve(got.subarray(0, 4))
    }),
  )
  ws.send(connectPacket({ clientId: d.screenId, username: d.screenId, password: d.deviceSecret, clean: true, keepalive: 0 }))
  const ack = await connack
  t.same([...ack], [0x20, 2, 0, 0], `connected (${ack.toString('hex')})`)
  // ws has no write backpressure signal of its own: keep up to 4 MiB queued in it.
  const chunk = floodChunk(d.screenId)
  const room = () => ws.bufferedAmount < 4 * 1024 * 1024
  const poll = (go: () => void): void => void setTimeout(() => (room() ? go() : poll(go)), POLL_MS)
  const f = new Flood(() => (ws.send(chunk), room()), poll, closed)
  t.after(() => f.stop())
  await checkFlood(t, c, d, f)
})
