// While a large fan-out goes out, what connected devices send is held unparsed and handled
// afterwards (ReadHold in the broker's packet guard). Against a real cloud and a real mqtt
// device: a report sent during a hold reaches the cloud only when the hold ends, and its
// acknowledgement only then. The guard on its own: chunks kept in order and parsed as one,
// a device past the byte bound parsed at once, a device still connecting never held, a
// device that leaves parsed before it is closed, and a hold that ends by itself.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { EventEmitter } from 'node:events'
import { encodeMessage, topics, type Reported } from '@svc/shared/mqtt/index'
import { ReadHold, guardClient, markAuthenticated, type GuardedClient } from '../../src/platform/broker/PacketGuard.js'
import { connectDevice, startCloud } from './link.js'

/** Resolves once `check` is true, looking again on every turn of the event loop (no timer). */
async function until(check: () => boolean, what: string, turns = 200_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (check()) return
    await new Promise((r) => setImmediate(r))
  }
  throw new Error(`never: ${what}`)
}

t.test('a report sent during a hold reaches the cloud, and is acknowledged, when the hold ends', async (t) => {
  const c = await startCloud(t)
  const d = await c.pair('Held')
  const dev = await connectDevice(t, d.mqtt.url, d)
  const { broker } = servicesOf(c.running.app)
  const seen: string[] = []
  const stop = await broker.follow(topics.reported(d.screenId), (m) => seen.push(m.payload.toString()))
  t.teardown(() => void stop())
  const conn = () => (broker.aedes as unknown as { clients: Record<string, { conn: { bytesRead: number } }> }).clients[d.screenId]!.conn

  const report: Reported = { version: 1, playing: { source: 'none', contentKind: null, contentId: null }, at: '2026-06-01T12:00:00.000Z' } as never
  const end = broker.holdReads()
  const before = conn().bytesRead
  let acked = false
  dev.client.publish(topics.reported(d.screenId), encodeMessage(report), { qos: 1 }, () => (acked = true))
  await until(() => conn().bytesRead > before, 'the report reached the cloud’s socket')
  // Many more turns: nothing parses it while the hold is on.
  for (let i = 0; i < 200; i++) await new Promise((r) => setImmediate(r))
  t.same(seen, [], 'not handled during the hold')
  t.notOk(acked, 'not acknowledged during the hold')
  end()
  await until(() => seen.length === 1 && acked, 'handled and acknowledged after the hold')
  t.same(JSON.parse(seen[0]!), report, 'the report as sent')
  end()
  t.pass('ending a hold twice is harmless')
})

/** A client as aedes makes it, as far as the guard goes: its parser records what it is given. */
function fakeClient(): GuardedClient & { parsed: Buffer[]; conn: EventEmitter & GuardedClient['conn'] } {
  const parsed: Buffer[] = []
  const conn = Object.assign(new EventEmitter(), { destroy: () => undefined, destroyed: false })
  const client = { id: 'scr_x', conn, parsed, _parser: { client: null as unknown, parse: (buf: Buffer) => parsed.push(buf) } }
  client._parser.client = client // as aedes links them
  return client
}
const PING = Buffer.from([0xc0, 0x00])
const limits = { beforeAuth: 4096, afterAuth: 4096 }

t.test('the guard keeps chunks in order and parses them as one at the end of the hold', async (t) => {
  const hold = new ReadHold(60_000, 1024)
  const a = fakeClient()
  const b = fakeClient()
  for (const x of [a, b]) guardClient(x, { limits, onRefuse: () => undefined, hold })
  markAuthenticated(a)
  markAuthenticated(b)
  a._parser.parse(PING)
  t.equal(a.parsed.length, 1, 'parsed at once without a hold')
  const end = hold.begin()
  t.ok(hold.holding)
  a._parser.parse(Buffer.from([0xc0]))
  a._parser.parse(Buffer.from([0x00, 0xc0, 0x00]))
  b._parser.parse(PING)
  t.equal(a.parsed.length, 1, 'kept while held')
  t.equal(b.parsed.length, 0)
  const inner = hold.begin()
  inner()
  t.ok(hold.holding, 'holds nest: the outer one still holds')
  end()
  t.notOk(hold.holding)
  t.same(a.parsed[1], Buffer.from([0xc0, 0x00, 0xc0, 0x00]), 'the kept chunks in arrival order, as one')
  t.same(b.parsed, [PING])
  a._parser.parse(PING)
  t.equal(a.parsed.length, 3, 'parsed at once after the hold')
})

t.test('past the byte bound, a device is parsed at once; a connecting device is never held', async (t) => {
  const hold = new ReadHold(60_000, 4)
  const a = fakeClient()
  const fresh = fakeClient()
  guardClient(a, { limits, onRefuse: () => undefined, hold })
  guardClient(fresh, { limits, onRefuse: () => undefined, hold })
  markAuthenticated(a)
  const end = hold.begin()
  a._parser.parse(PING)
  a._parser.parse(PING)
  t.equal(a.parsed.length, 0, 'four bytes kept')
  a._parser.parse(PING)
  t.same(a.parsed, [Buffer.concat([PING, PING, PING])], 'the fifth byte parses all of it')
  fresh._parser.parse(PING)
  t.same(fresh.parsed, [PING], 'a device before its CONNECT is accepted is not held')
  end()
  t.equal(a.parsed.length, 1, 'nothing left to parse')
})

t.test('a device that leaves during a hold is parsed before it is closed', async (t) => {
  const hold = new ReadHold(60_000)
  const a = fakeClient()
  guardClient(a, { limits, onRefuse: () => undefined, hold })
  markAuthenticated(a)
  const order: string[] = []
  a.conn.on('end', () => order.push(`closed after ${a.parsed.length} parsed`)) // as aedes listens
  const end = hold.begin()
  a._parser.parse(PING)
  a.conn.emit('end')
  t.same(order, ['closed after 1 parsed'])
  end()
  t.equal(a.parsed.length, 1, 'parsed once')
  t.equal(a.conn.listenerCount('close'), 0, 'its listeners are gone')
})

t.test('a hold ends by itself after its longest time', async (t) => {
  const hold = new ReadHold(5)
  const a = fakeClient()
  guardClient(a, { limits, onRefuse: () => undefined, hold })
  markAuthenticated(a)
  const end = hold.begin()
  a._parser.parse(PING)
  t.equal(a.parsed.length, 0)
  await new Promise<void>((resolve) => {
    const iv = setInterval(() => a.parsed.length && (clearInterval(iv), resolve()), 1)
  })
  t.notOk(hold.holding, 'no longer holding, though not ended')
  a._parser.parse(PING)
  t.equal(a.parsed.length, 2, 'parsed at once from then on')
  end()
})
