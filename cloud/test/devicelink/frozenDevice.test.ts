// A device that stops reading (its TCP window full: a frozen player, a dead link that has
// not timed out yet) must not stall a fan-out. aedes calls a publish back only once every
// subscriber's write has finished, and a write to a full socket waits for `drain` (up to its
// drainTimeout, 60 s, before it cuts the device). Here a raw MQTT device subscribes, stops
// reading, and is sent large desired states until its connection is backpressured; then a
// cast to every screen must reach the normal devices (real mqtt.js clients) at once, count
// them published, and the frozen one, when it reads again, must get its versions in
// increasing order ending with the latest (the one carrying the cast).
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import net from 'node:net'
import { topics, type DesiredState } from '@svc/shared/mqtt/index'
import { connectDevice, startCloud, type Device } from './link.js'
import { connectPacket, subscribePacket } from './rawDevice.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

/** A raw MQTT 3.1.1 device that can stop reading: the PUBLISH packets on its desired topic, in arrival order. */
class FrozenDevice {
  readonly states: DesiredState[] = []
  private buf = Buffer.alloc(0)
  private chunks: Buffer[] = []
  private waiters: { pred: () => boolean; resolve: () => void }[] = []
  private constructor(
    readonly socket: net.Socket,
    readonly screenId: string,
  ) {
    socket.on('error', () => undefined)
    socket.on('data', (d) => {
      this.chunks.push(d)
      this.parse()
    })
  }

  static async open(port: number, d: Device): Promise<FrozenDevice> {
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(s))
      s.once('error', reject)
    })
    const dev = new FrozenDevice(socket, d.screenId)
    socket.write(connectPacket({ clientId: d.screenId, username: d.screenId, password: d.deviceSecret, clean: false, keepalive: 0 }))
    await dev.until(() => dev.connacked)
    socket.write(subscribePacket(1, [topics.desired(d.screenId)], 1))
    await dev.until(() => dev.states.length > 0)
    return dev
  }

  private connacked = false

  until(pred: () => boolean, timeoutMs = HANG_GUARD_MS): Promise<void> {
    if (pred()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`frozen device: condition not met; versions ${this.states.map((s) => s.version)}`)), timeoutMs)
      this.waiters.push({ pred, resolve: () => (clearTimeout(timer), resolve()) })
    })
  }

  private parse(): void {
    if (this.chunks.length) {
      this.buf = Buffer.concat([this.buf, ...this.chunks])
      this.chunks = []
    }
    for (;;) {
      if (this.buf.length < 2) break
      let len = 0
      let mul = 1
      let i = 1
      for (; i < 5; i++) {
        if (i >= this.buf.length) return
        const byte = this.buf[i]!
        len += (byte & 0x7f) * mul
        mul *= 128
        if (!(byte & 0x80)) break
      }
      const total = i + 1 + len
      if (this.buf.length < total) break
      const first = this.buf[0]!
      const body = this.buf.subarray(i + 1, total)
      this.buf = this.buf.subarray(total)
      if (first >> 4 === 2) this.connacked = true
      if (first >> 4 === 3) {
        const qos = (first >> 1) & 3
        const topicLen = body.readUInt16BE(0)
        const topic = body.subarray(2, 2 + topicLen).toString()
        let at = 2 + topicLen
        if (qos > 0) {
          this.socket.write(Buffer.from([0x40, 0x02, body[at]!, body[at + 1]!])) // PUBACK
          at += 2
        }
        if (topic === topics.desired(this.screenId)) this.states.push(JSON.parse(body.subarray(at).toString()) as DesiredState)
      }
    }
    this.waiters = this.waiters.filter((w) => (w.pred() ? (w.resolve(), false) : true))
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/** A bound for a race: its timer does not keep the process up once the test is done. */
const deadline = (ms: number) => new Promise((r) => setTimeout(r, ms).unref())

t.test('a device that stops reading does not stall a cast to the others; it gets its versions in order when it reads again', async (t) => {
  const c = await startCloud(t)
  const { broker, desiredPublisher } = servicesOf(c.running.app)
  // Large enough that a few versions fill the socket buffers of a device that does not read.
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_big' }, { content: { name: 'x'.repeat(600_000), url: 'https://cdn.example/big.mp4' } })
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_news' })
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const normal = []
  for (let i = 0; i < 3; i++) normal.push(await connectDevice(t, url, await c.pair(`Normal ${i}`)))
  const frozenPairing = await c.pair('Frozen')
  const frozen = await FrozenDevice.open(c.running.mqttPort!, frozenPairing)
  t.teardown(() => void frozen.socket.destroy())
  const frozenId = frozenPairing.screenId
  for (const n of normal) await n.next(() => true)
  t.equal(frozen.states.length, 1, 'the frozen device got its first state while it still read')

  // It stops reading; large states for it alone until its connection is backpressured.
  frozen.socket.pause()
  const big = await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_big', scopeKind: 'screens', screenIds: [frozenId] })
  t.equal(big.status, 201)
  const conn = () => (broker.aedes as unknown as { clients: Record<string, { conn: net.Socket } | undefined> }).clients[frozenId]?.conn
  for (const guardEnd = Date.now() + HANG_GUARD_MS; !conn()?.writableNeedDrain && Date.now() < guardEnd; ) {
    // Today's publisher never resolves a mark once the socket is full: race it.
    await Promise.race([desiredPublisher.markDirty(c.workspaceId, [frozenId]), deadline(1000)])
  }
  t.ok(conn()?.writableNeedDrain, `the frozen device's connection is backpressured (${conn()?.writableLength} bytes waiting in the cloud)`)

  // More changes for it while it is stuck: each mark is done at once; only the newest state waits for it.
  for (let i = 0; i < 3; i++) {
    const mark = desiredPublisher.markDirty(c.workspaceId, [frozenId]).then(() => 'published')
    t.equal(await Promise.race([mark, deadline(3000).then(() => 'stuck')]), 'published', `change ${i + 1} for the frozen screen is done`)
  }

  // A cast to every screen reaches the three normal devices promptly.
  const t0 = performance.now()
  const res = await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_news' })
  t.equal(res.status, 201)
  const cast = res.body.data
  const reached = await Promise.all(
    normal.map((n) =>
      n
        .next((s) => s.casts[0]?.id === cast.id, 4000)
        .then(
          () => true,
          () => false,
        ),
    ),
  )
  t.same(reached, [true, true, true], `the normal devices hold the cast (${Math.round(performance.now() - t0)} ms)`)
  if (!reached.every(Boolean)) return
  const delivery = async () => (await c.call('GET', `/v1/casts/${cast.id}`)).body.data.delivery
  let d = await delivery()
  for (const guardEnd = Date.now() + HANG_GUARD_MS; d.published < 3 && Date.now() < guardEnd; ) d = (await sleep(20), await delivery())
  t.same(d, { targeted: 4, published: 3, applied: 0 }, 'published to the three the broker took it for; the frozen one waits behind its slow write')
  t.ok(broker.isConnected(frozenId), 'the frozen device is still connected (aedes cuts it only after its drain timeout)')
  t.notOk(
    frozen.states.some((s) => s.casts[0]?.id === cast.id),
    'the frozen device has not got it yet',
  )

  // It reads again: every version it gets is newer than the one before, ending with the latest.
  const latest = (await c.call('GET', `/v1/screens/${frozenId}`)).body.data.desiredVersion as number
  frozen.socket.resume()
  await frozen.until(() => frozen.states.at(-1)?.version === latest)
  const versions = frozen.states.map((s) => s.version)
  t.ok(
    versions.every((v, i) => i === 0 || v > versions[i - 1]!),
    `versions strictly increase (${versions.join(',')})`,
  )
  t.match(frozen.states.at(-1), { version: latest, casts: [{ id: cast.id }] }, 'the last one is the latest, with the cast')
  t.ok(versions.length < latest, `the versions superseded while it was stuck were not sent (${latest - versions.length} skipped)`)
  await desiredPublisher.idle()
  t.same(await delivery(), { targeted: 4, published: 4, applied: 0 }, 'then counted published to it too')
  await sleep(200)
  t.equal(frozen.states.at(-1)!.version, latest, 'nothing older came after it')
})
