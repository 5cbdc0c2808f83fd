// A device spoken to byte by byte: an MQTT 3.1.1 client on a raw TCP socket, so a test can
// close the connection at any phase (before CONNACK, right after it, while queued jobs are
// still being sent, after SUBSCRIBE) exactly as a flaky link or a crashing player would.
import net from 'node:net'
import { packet, utf8 } from '@svc/shared/testing/mqttWire'
import { HANG_GUARD_MS } from '@svc/shared/testing'

export interface ConnectOptions {
  clientId: string
  username: string
  password: string
  clean: boolean
  /** Seconds; 0 turns keepalive off. */
  keepalive: number
  will?: { topic: string; payload: Buffer; qos: 0 | 1; retain: boolean }
}

export function connectPacket(o: ConnectOptions): Buffer {
  let flags = 0x80 | 0x40 | (o.clean ? 0x02 : 0)
  if (o.will) flags |= 0x04 | (o.will.qos << 3) | (o.will.retain ? 0x20 : 0)
  const ka = Buffer.alloc(2)
  ka.writeUInt16BE(o.keepalive)
  const parts = [utf8('MQTT'), Buffer.from([4, flags]), ka, utf8(o.clientId)]
  if (o.will) parts.push(utf8(o.will.topic), utf8(o.will.payload))
  parts.push(utf8(o.username), utf8(o.password))
  return packet(0x10, Buffer.concat(parts))
}

export function subscribePacket(messageId: number, filters: string[], qos: 0 | 1): Buffer {
  const id = Buffer.alloc(2)
  id.writeUInt16BE(messageId)
  return packet(0x82, Buffer.concat([id, ...filters.map((f) => Buffer.concat([utf8(f), Buffer.from([qos])]))]))
}

export function publishPacket(topic: string, payload: Buffer | string, opts: { qos?: 0 | 1; retain?: boolean; messageId?: number } = {}): Buffer {
  const qos = opts.qos ?? 0
  const parts = [utf8(topic)]
  if (qos > 0) {
    const id = Buffer.alloc(2)
    id.writeUInt16BE(opts.messageId ?? 1)
    parts.push(id)
  }
  parts.push(Buffer.isBuffer(payload) ? payload : Buffer.from(payload))
  return packet(0x30 | (qos << 1) | (opts.retain ? 1 : 0), Buffer.concat(parts))
}

export const DISCONNECT = Buffer.from([0xe0, 0x00])

/** One raw connection: bytes in, a reader of whole packets out. */
export class RawDevice {
  readonly socket: net.Socket
  private buf = Buffer.alloc(0)
  private waiters: { type: number; resolve: (p: { type: number; body: Buffer }) => void; reject: (e: Error) => void }[] = []
  readonly closed: Promise<void>
  /** Packet types received, in order (upper nibble of the first byte). */
  readonly received: number[] = []

  private constructor(socket: net.Socket) {
    this.socket = socket
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()))
    socket.on('error', () => undefined)
    socket.on('data', (d) => this.onData(d))
    socket.once('close', () => {
      for (const w of this.waiters) w.reject(new Error('connection closed'))
      this.waiters = []
    })
  }

  static open(port: number): Promise<RawDevice> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new RawDevice(s)))
      s.once('error', reject)
    })
  }

  send(b: Buffer): void {
    this.socket.write(b)
  }

  private onData(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d])
    for (;;) {
      if (this.buf.length < 2) return
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
      if (this.buf.length < total) return
      const type = this.buf[0]! >> 4
      const body = this.buf.subarray(i + 1, total)
      this.buf = this.buf.subarray(total)
      this.received.push(type)
      const w = this.waiters.findIndex((x) => x.type === type)
      if (w >= 0) this.waiters.splice(w, 1)[0]!.resolve({ type, body })
    }
  }

  /** Resolves with the next packet of this type (2 = CONNACK, 3 = PUBLISH, 9 = SUBACK). */
  next(type: number, timeoutMs = HANG_GUARD_MS): Promise<{ type: number; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no packet of type ${type}`)), timeoutMs)
      this.waiters.push({
        type,
        resolve: (p) => (clearTimeout(timer), resolve(p)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      })
    })
  }

  /** Drops the TCP connection without DISCONNECT (as a cut link or a crash does). */
  drop(): Promise<void> {
    this.socket.destroy()
    return this.closed
  }
}
