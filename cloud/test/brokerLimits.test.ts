// The broker's packet size limit and its retained-message rule, against a real cloud:
// raw TCP and WebSocket connections announcing huge packets before logging in, a real
// `mqtt` client publishing over the limit after it, and retained publishes by a device.
// The scanner that reads the fixed headers is also checked on its own.
import { servicesOf } from '../src/app.js'
import t, { type Test } from 'tap'
import net from 'node:net'
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt'
import { WebSocket } from 'ws'
import { MAX_CONNECT_PACKET_BYTES, MAX_DEVICE_PACKET_BYTES, MAX_PAYLOAD_BYTES, topics } from '@svc/shared/mqtt/index'
import { remainingLength } from '@svc/shared/testing/mqttWire'
import { PacketScanner } from '../src/platform/broker/PacketGuard.js'
import { startCloud, type Cloud, type Device } from './devicelink/link.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const AT = '2026-06-01T12:00:00.000Z'
/** A fixed header announcing `length` remaining bytes for packet type byte `type`. */
const header = (type: number, length: number): Buffer => Buffer.concat([Buffer.from([type]), remainingLength(length)])
const HUGE = 268_435_455 // 256 MB, the largest length MQTT can announce

t.test('the scanner follows packet boundaries and stops at the limit', async (t) => {
  const s = new PacketScanner({ beforeAuth: 10, afterAuth: 100 })
  t.equal(s.feed(Buffer.concat([header(0x10, 10), Buffer.alloc(10), header(0xc0, 0)])), null, 'a packet at the limit, then a PINGREQ')
  // A header split across chunks, one byte at a time.
  const big = header(0x30, 50)
  t.equal(s.feed(big.subarray(0, 1)), null)
  t.match(s.feed(big.subarray(1)), { reason: 'too_large', announced: 50, limit: 10, authenticated: false }, 'over the limit before login')
  const a = new PacketScanner({ beforeAuth: 10, afterAuth: 100 })
  a.authenticated = true
  t.equal(a.feed(Buffer.concat([header(0x30, 100), Buffer.alloc(60)])), null)
  t.equal(a.feed(Buffer.concat([Buffer.alloc(40), header(0x30, 3), Buffer.from('abc')])), null, 'bodies are skipped across chunks')
  const huge = header(0x30, HUGE)
  t.equal(huge.length, 5)
  t.match(a.feed(huge.subarray(0, 3)), { reason: 'too_large' }, 'refused from the first length bytes already')
  const m = new PacketScanner({ beforeAuth: Number.MAX_SAFE_INTEGER, afterAuth: 0 })
  t.match(m.feed(Buffer.from([0x10, 0xff, 0xff, 0xff, 0xff, 0x01])), { reason: 'malformed_length' }, 'a fifth length byte')
  t.equal(MAX_CONNECT_PACKET_BYTES, 4096)
  t.equal(MAX_DEVICE_PACKET_BYTES, MAX_PAYLOAD_BYTES + 1024)
})

/** Writes `header` then junk until the server closes the socket or `max` bytes went out. */
function flood(port: number, head: Buffer, max: number): Promise<{ closedByServer: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now()
    const sock = net.connect(port, '127.0.0.1')
    const chunk = Buffer.alloc(64 * 1024, 0x61)
    let sent = 0
    let done = false
    const finish = (closedByServer: boolean) => {
      if (done) return
      done = true
      sock.destroy()
      resolve({ closedByServer, ms: Date.now() - started })
    }
    sock.on('error', () => finish(true))
    sock.on('close', () => finish(true))
    sock.on('end', () => finish(true))
    const pump = () => {
      while (!done && sent < max) {
        sent += chunk.length
        if (!sock.write(chunk)) return void sock.once('drain', pump)
      }
      if (!done) setTimeout(() => finish(false), HANG_GUARD_MS).unref()
    }
    sock.once('connect', () => {
      sock.write(head)
      pump()
    })
  })
}

function heap(): number {
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

function deviceOpts(d: Device, extra: Partial<IClientOptions> = {}): IClientOptions {
  return {
    clientId: d.screenId,
    username: d.screenId,
    password: d.deviceSecret,
    protocolVersion: 4,
    clean: false,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    ...extra,
  }
}

async function device(t: Test, cloud: Cloud, d: Device, extra: Partial<IClientOptions> = {}): Promise<MqttClient> {
  const c = await connectAsync(`mqtt://127.0.0.1:${cloud.running.mqttPort}`, deviceOpts(d, extra))
  t.after(() => c.endAsync(true).catch(() => undefined))
  return c
}

const closed = (c: MqttClient) => new Promise<void>((resolve) => (c.disconnected || !c.connected ? resolve() : c.once('close', () => resolve())))

t.test('unauthenticated connections announcing a 256 MB CONNECT are closed before it is buffered', async (t) => {
  const cloud = await startCloud(t)
  const d = await cloud.pair()
  const bystander = await device(t, cloud, d)
  const port = cloud.running.mqttPort!
  const before = heap()
  const results = await Promise.all(Array.from({ length: 8 }, () => flood(port, header(0x10, HUGE), 16 * 1024 * 1024)))
  const grown = heap() - before
  t.ok(
    results.every((r) => r.closedByServer),
    'every socket was closed by the cloud',
  )
  t.ok(grown < 48 * 1024 * 1024, `memory grew by ${Math.round(grown / 1024 / 1024)} MB for 8 × 16 MB sent`)
  t.comment(`closed after ${results.map((r) => r.ms).join(', ')} ms; heap + buffers grew ${(grown / 1024 / 1024).toFixed(1)} MB`)
  // A CONNECT just over the pre-login limit, complete and well-formed, is refused the same way.
  const bigConnect = await flood(port, header(0x10, MAX_CONNECT_PACKET_BYTES + 1), 0)
  t.ok(bigConnect.closedByServer, 'a CONNECT over 4 KiB is refused')
  t.ok(bystander.connected, 'a connected device is not affected')
  await bystander.publishAsync(topics.status(d.screenId), JSON.stringify({ status: 'online', at: AT }), { qos: 1 })
})

t.test('the same over WebSocket', async (t) => {
  const cloud = await startCloud(t)
  const url = `ws://127.0.0.1:${cloud.running.httpPort}/mqtt`
  const send = (data: Buffer) =>
    new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(url, 'mqtt')
      const timer = setTimeout(() => reject(new Error(`the broker did not close the WebSocket within ${HANG_GUARD_MS / 60_000} minutes`)), HANG_GUARD_MS)
      ws.on('open', () => ws.send(data))
      ws.on('error', () => undefined)
      ws.on('close', (code) => (clearTimeout(timer), resolve(code)))
    })
  t.ok(await send(Buffer.concat([header(0x10, HUGE), Buffer.alloc(64 * 1024)])), 'a 256 MB CONNECT announced in a WebSocket message: closed')
  t.equal(await send(Buffer.alloc(MAX_DEVICE_PACKET_BYTES + 64)), 1009, 'a WebSocket message over the device limit: closed by ws (1009)')

  // A paired device over WebSocket: 1 MiB goes through, more closes its connection.
  const d = await cloud.pair()
  const c = await connectAsync(url, deviceOpts(d))
  t.after(() => c.endAsync(true).catch(() => undefined))
  await c.publishAsync(topics.jobResults(d.screenId), Buffer.alloc(MAX_PAYLOAD_BYTES, 0x20), { qos: 1 })
  t.ok(c.connected, 'a 1 MiB payload over WebSocket is accepted')
  const gone = closed(c)
  c.publish(topics.jobResults(d.screenId), Buffer.alloc(2 * MAX_PAYLOAD_BYTES, 0x20), { qos: 1 })
  await gone
  t.pass('2 MiB over WebSocket: the connection is closed')
})

t.test('a device publishing over 1 MiB is disconnected; up to it, and other devices, are fine', async (t) => {
  const cloud = await startCloud(t)
  const [a, b] = [await cloud.pair('A'), await cloud.pair('B')]
  const ca = await device(t, cloud, a)
  const cb = await device(t, cloud, b)
  const at = await device(t, cloud, a).catch(() => null) // takes A's session over; ca is closed
  t.ok(at)
  const dev = at!
  await dev.publishAsync(topics.jobResults(a.screenId), Buffer.alloc(MAX_PAYLOAD_BYTES, 0x20), { qos: 1 })
  t.ok(dev.connected, 'a 1 MiB payload is accepted (PUBACK)')
  const gone = closed(dev)
  const before = heap()
  dev.publish(topics.jobResults(a.screenId), Buffer.alloc(8 * MAX_PAYLOAD_BYTES, 0x20), { qos: 1 })
  await gone
  t.pass('an 8 MiB job-results: the connection is closed')
  t.ok(heap() - before < 64 * 1024 * 1024, 'without buffering it')
  t.ok(cb.connected, 'the other device stays connected')
  await cb.publishAsync(topics.reported(b.screenId), JSON.stringify({ version: 0, playing: { source: 'none', contentKind: null, contentId: null }, at: AT }), {
    qos: 1,
  })
  for (const until = Date.now() + HANG_GUARD_MS; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
    if ((await cloud.call('GET', `/v1/screens/${b.screenId}`)).body.data.reported) break
  }
  t.ok((await cloud.call('GET', `/v1/screens/${b.screenId}`)).body.data.reported, 'and its report is handled')
  void ca
  const again = await device(t, cloud, a)
  t.ok(again.connected, 'the disconnected device can reconnect')
})

t.test('retained publishes by a device: only its own status is stored', async (t) => {
  const cloud = await startCloud(t)
  const d = await cloud.pair()
  const c = await device(t, cloud, d)
  const aedes = servicesOf(cloud.running.app).broker.aedes as unknown as {
    persistence: { createRetainedStream(p: string): AsyncIterable<{ topic: string; payload: Buffer }> }
  }
  const retained = async () => {
    const out: Record<string, string> = {}
    for await (const p of aedes.persistence.createRetainedStream(`svc/v1/screens/${d.screenId}/+`)) out[p.topic] = p.payload.toString()
    return out
  }
  const reported = JSON.stringify({ version: 0, playing: { source: 'none', contentKind: null, contentId: null }, at: AT })
  await c.publishAsync(topics.reported(d.screenId), reported, { qos: 1, retain: true })
  await c.publishAsync(topics.jobResults(d.screenId), JSON.stringify({ jobId: 'j' }), { qos: 1, retain: true })
  await c.publishAsync(topics.status(d.screenId), JSON.stringify({ status: 'online', at: AT, padding: 'x'.repeat(100_000) }), { qos: 1, retain: true })
  // Published in this order, one PUBACK awaited after another: once the status (the last) is stored, so would the others be.
  let stored = await retained()
  for (const until = Date.now() + HANG_GUARD_MS; !stored[topics.status(d.screenId)] && Date.now() < until; stored = await retained())
    await new Promise((r) => setTimeout(r, 10))
  t.same(Object.keys(stored).sort(), [topics.desired(d.screenId), topics.status(d.screenId)].sort(), 'reported and job-results were not retained')
  t.equal(stored[topics.status(d.screenId)], JSON.stringify({ status: 'online', at: AT }), 'the status is stored as the contract defines it')
  for (const until = Date.now() + HANG_GUARD_MS; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
    if ((await cloud.call('GET', `/v1/screens/${d.screenId}`)).body.data.reported) break
  }
  t.ok((await cloud.call('GET', `/v1/screens/${d.screenId}`)).body.data.reported, 'a retained reported still reaches the cloud')

  const gone = closed(c)
  c.publish(topics.status(d.screenId), 'x'.repeat(10_000), { qos: 1, retain: true })
  await gone
  t.pass('a status that is no status message closes the connection')
  t.equal((await retained())[topics.status(d.screenId)], JSON.stringify({ status: 'online', at: AT }), 'and is not stored')
})
