// Full-jitter exponential backoff: the sequence with pinned randomness, the cap, reset,
// and the MQTT link driving its reconnects with it (mqtt.js's own fixed period is off).
import t from 'tap'
import { EventEmitter } from 'node:events'
import type { IClientOptions, MqttClient } from 'mqtt'
import { Backoff } from '../../src/runtime/Backoff.js'
import { MqttLink } from '../../src/link/MqttLink.js'
import { FakeTime, captureLog } from '../helpers.js'

t.test('windows double from the base up to the cap; the delay is random × window', async (t) => {
  const b = new Backoff({ baseMs: 1000, capMs: 60_000, random: () => 0.5 })
  const seq = Array.from({ length: 9 }, () => b.next())
  t.same(seq, [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000])
  t.equal(b.attempt, 9)
  b.reset()
  t.equal(b.next(), 500, 'reset starts from the base window again')
})

t.test('full jitter: any point of [0, window) is possible, never the window itself', async (t) => {
  const values = [0, 0.999999, 0.25]
  let i = 0
  const b = new Backoff({ baseMs: 1000, capMs: 4000, random: () => values[i++ % values.length]! })
  t.same([b.next(), b.next(), b.next(), b.next()], [0, 1999, 1000, 0])
  t.equal(b.window, 4000, 'capped')
  const odd = new Backoff({ random: () => 1 })
  t.equal(odd.next(), 0, 'a random source answering 1 (outside [0,1)) is treated as 0, never past the window')
  t.throws(() => new Backoff({ baseMs: 0 }), TypeError)
  t.throws(() => new Backoff({ baseMs: 10, capMs: 5 }), TypeError)
  const huge = new Backoff({ random: () => 0.5 })
  for (let n = 0; n < 2000; n++) huge.next()
  t.equal(huge.next(), 30_000, 'no overflow after many attempts')
})

t.test('agents with different random draws spread out instead of reconnecting together', async (t) => {
  let seed = 42
  const lcg = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const firsts = Array.from({ length: 1000 }, () => new Backoff({ random: lcg }).next())
  const buckets = new Set(firsts.map((d) => Math.floor(d / 100)))
  t.ok(buckets.size >= 9, `1000 agents land in ${buckets.size} of 10 100-ms buckets of the first second`)
})

/** A stand-in for mqtt.js's client: records reconnects, lets the test emit events. */
class FakeClient extends EventEmitter {
  connected = false
  reconnects = 0
  ended = false
  incomingStore = {}
  outgoingStore = {}
  constructor(readonly options: IClientOptions) {
    super()
  }
  reconnect(): this {
    this.reconnects++
    return this
  }
  publish(_t: string, _p: Buffer, _o: unknown, cb?: (err?: Error) => void): this {
    cb?.()
    return this
  }
  subscribe(_f: unknown, cb?: (err: Error | null, granted: unknown[]) => void): this {
    cb?.(null, [])
    return this
  }
  async endAsync(): Promise<void> {
    this.ended = true
  }
}

t.test('the link reconnects on the backoff sequence, resets after a connect, and reports a revoked credential', async (t) => {
  const time = new FakeTime('2026-06-01T12:00:00.000Z')
  const { log, lines } = captureLog(time.clock, 'debug')
  let client: FakeClient | null = null
  const link = new MqttLink({
    url: 'mqtt://broker.invalid:1883',
    screenId: 'scr_1',
    deviceSecret: 's3cret',
    log,
    clock: time.clock,
    timers: time,
    backoff: { baseMs: 1000, capMs: 8000, random: () => 0.5 },
    connect: (_url, opts) => (client = new FakeClient(opts)) as unknown as MqttClient,
  })
  link.start()
  const c = client as unknown as FakeClient
  t.match(c.options, { clientId: 'scr_1', username: 'scr_1', password: 's3cret', clean: false, reconnectPeriod: 0, protocolVersion: 4 })
  t.match(c.options.will, { topic: 'svc/v1/screens/scr_1/status', qos: 1, retain: true })
  t.match(JSON.parse(String(c.options.will!.payload)), { status: 'offline', at: '2026-06-01T12:00:00.000Z' })

  for (let i = 0; i < 5; i++) {
    c.emit('error', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))
    c.emit('close')
    time.advance(time.delays.at(-1)!)
  }
  t.same(time.delays, [500, 1000, 2000, 4000, 4000], 'full-jitter windows (random pinned at 0.5), capped')
  t.equal(c.reconnects, 5)
  t.equal(lines.filter((l) => String(l.msg).startsWith('cannot reach the broker')).length, 1, 'one line per distinct failure, not per retry')
  t.match(JSON.parse(String(c.options.will!.payload)), { at: new Date(time.nowMs).toISOString() }, 'the will is re-dated per attempt')

  c.connected = true
  c.emit('connect')
  c.connected = false
  c.emit('close')
  t.equal(time.delays.at(-1), 500, 'a successful connect resets the backoff')
  time.advance(500)

  let revoked = 0
  link.on('revoked', () => revoked++)
  const refuse = () => {
    c.emit('error', Object.assign(new Error('Connection refused: Bad username or password'), { code: 4 }))
    c.emit('close')
  }
  refuse()
  t.equal(revoked, 0, 'one refusal may be a fluke')
  time.advance(time.delays.at(-1)!)
  const before = c.reconnects
  refuse()
  t.equal(revoked, 1, 'the second consecutive refusal means revoked')
  time.advance(60_000)
  t.equal(c.reconnects, before, 'no more reconnects once revoked')
  t.ok(lines.some((l) => l.level === 'error' && /revoked/.test(String(l.msg))))
  await link.stop()
  t.equal(c.ended, true)
})
