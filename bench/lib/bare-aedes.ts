// The cast-fanout baseline (not a test): a bare Aedes in its own process, as the library
// ships it (but for the emitter queue, see below): memory persistence, no authentication, no authorisation, the same Aedes
// version as the product (resolved from cloud/). Listens on MQTT/TCP at BENCH_PORT on
// 127.0.0.1. Over IPC: { type: 'publish', topics, payloadBytes, version } publishes one
// retained QoS 1 message of payloadBytes bytes to each topic, as the product publishes one
// retained desired state per screen; { type: 'publish', topics, template: { text, screenId } }
// publishes the product's own desired state (text, as one screen got it) to each topic with
// that screen's id in place of screenId (ids are of one length: the same bytes per screen).
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from './harness.js'

type Msg = { type: 'publish'; topics: string[]; payloadBytes?: number; version?: number; template?: { text: string; screenId: string } } | { type: 'close' }

const require = createRequire(join(ROOT, 'cloud', 'package.json'))
/** The part of Aedes used here (its types live in cloud/'s dependencies). */
interface Broker {
  handle: (socket: import('node:net').Socket) => void
  publish: (packet: { cmd: 'publish'; topic: string; payload: Buffer; qos: 0 | 1 | 2; retain: boolean; dup: boolean }, done: (err?: Error) => void) => void
  close: (done: () => void) => void
}
const { Aedes } = (await import(pathToFileURL(require.resolve('aedes')).href)) as {
  Aedes: { createBroker: (opts: { concurrency: number }) => Promise<Broker> }
}
// One option changed from the defaults, as the product sets it: no emitter queue. With the
// default queue (100 messages at once) the reports devices send while a fan-out is in flight
// are drained by recursion and overflow the stack (this process died of it).
const aedes = await Aedes.createBroker({ concurrency: 0 })
const server = createServer((socket) => aedes.handle(socket))
await new Promise<void>((r) => server.listen(Number(process.env.BENCH_PORT), '127.0.0.1', r))
process.send!({ type: 'listening' })

/** A JSON object with the given version, padded to exactly `bytes` bytes (when bytes allow). */
function payload(version: number, bytes: number): Buffer {
  const head = `{"version":${version},"pad":"`
  return Buffer.from(`${head + 'x'.repeat(Math.max(0, bytes - head.length - 2))}"}`)
}

process.on('message', (m: Msg) => {
  if (m.type === 'publish') {
    let left = m.topics.length
    const t = m.template
    for (const topic of m.topics)
      aedes.publish(
        {
          cmd: 'publish',
          topic,
          payload: t ? Buffer.from(t.text.replaceAll(t.screenId, topic.split('/')[3]!)) : payload(m.version ?? 1, m.payloadBytes ?? 0),
          qos: 1,
          retain: true,
          dup: false,
        },
        () => {
          if (--left === 0) process.send!({ type: 'published' })
        },
      )
  } else if (m.type === 'close') {
    server.close()
    aedes.close(() => process.exit(0))
    setTimeout(() => process.exit(0), 5000).unref()
  }
})
process.on('disconnect', () => process.exit(0))
