// The device-flood attacker (not a test), in its own process: one paired device on a raw
// TCP socket, CONNECT with its real credentials, then pre-encoded QoS 0 PUBLISH packets
// written as fast as the socket takes them (a new buffer as soon as the last one drained).
// Closed by the broker, it connects again at once and floods again, as a persistent attacker
// would. Environment: BENCH_MQTT_PORT, BENCH_SCREEN_ID, BENCH_SECRET, BENCH_TOPIC (`reported`,
// default, or `status`). Over IPC: { type: 'flooding' } once the first CONNACK came, then
// every second { type: 'stats', messages, bytes, connects, closes } (totals so far);
// { type: 'stop' } ends it.
import net from 'node:net'
import { packet, utf8 } from '@svc/shared/testing/mqttWire'

const port = Number(process.env.BENCH_MQTT_PORT)
const screenId = process.env.BENCH_SCREEN_ID!
const secret = process.env.BENCH_SECRET!
const kind = process.env.BENCH_TOPIC === 'status' ? 'status' : 'reported'

const ka = Buffer.alloc(2)
const CONNECT = packet(0x10, Buffer.concat([utf8('MQTT'), Buffer.from([4, 0x80 | 0x40 | 0x02]), ka, utf8(screenId), utf8(screenId), utf8(secret)]))
const payload =
  kind === 'status'
    ? JSON.stringify({ status: 'online', at: new Date().toISOString() })
    : JSON.stringify({
        version: 1,
        playing: { source: 'assignment', contentKind: 'playlist', contentId: 'pl_bench' },
        panel: { power: 'on', input: 'hdmi1' },
        storage: { usedBytes: 1_000_000, totalBytes: 32_000_000_000 },
        at: new Date().toISOString(),
      })
const ONE = packet(0x30, Buffer.concat([utf8(`svc/v1/screens/${screenId}/${kind}`), Buffer.from(payload)]))
const PER_CHUNK = Math.ceil(65_536 / ONE.length)
const CHUNK = Buffer.concat(Array.from({ length: PER_CHUNK }, () => ONE))

let messages = 0
let bytes = 0
let connects = 0
let closes = 0
let stopped = false
let announced = false
let socket: net.Socket | null = null

function connect(): void {
  if (stopped) return
  const s = net.connect(port, '127.0.0.1')
  socket = s
  s.setNoDelay(true)
  s.on('error', () => undefined)
  let flooding = false
  s.on('data', (d: Buffer) => {
    // The first bytes back are the CONNACK (0x20 0x02 flags code); code 0 = accepted.
    if (flooding || d.length < 4 || d[0] !== 0x20) return
    if (d[3] !== 0) {
      console.error(`CONNACK refused: ${d[3]}`)
      process.exit(1)
    }
    flooding = true
    connects++
    if (!announced) {
      announced = true
      process.send!({ type: 'flooding' })
    }
    pump()
  })
  const pump = (): void => {
    while (!stopped && !s.destroyed) {
      messages += PER_CHUNK
      bytes += CHUNK.length
      if (!s.write(CHUNK)) return void s.once('drain', pump)
    }
  }
  s.once('close', () => {
    if (flooding) closes++
    setImmediate(connect)
  })
  s.write(CONNECT)
}

connect()
const timer = setInterval(() => process.send!({ type: 'stats', messages, bytes, connects, closes }), 1000)
process.on('message', (m: { type: string }) => {
  if (m.type !== 'stop') return
  stopped = true
  clearInterval(timer)
  process.send!({ type: 'stats', messages, bytes, connects, closes }, () => {
    socket?.destroy()
    process.exit(0)
  })
})
process.on('disconnect', () => process.exit(0))
