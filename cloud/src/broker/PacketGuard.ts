// A size limit on MQTT packets, in front of aedes (which has none: it buffers a packet
// whole, whatever length the fixed header announces). The guard reads each packet's fixed
// header as bytes arrive and ends the connection as soon as an announced remaining length
// is over the limit, before the body is buffered anywhere: a few KB until the broker has
// accepted the CONNECT, the contract's payload limit plus room for the topic afterwards.
import { Duplex } from 'node:stream'

export interface PacketLimits {
  /** Largest remaining length before the CONNECT is accepted (the CONNECT itself). */
  beforeAuth: number
  /** Largest remaining length of a packet from an authenticated device. */
  afterAuth: number
}

/** Why a connection was ended. */
export interface PacketRefusal {
  reason: 'too_large' | 'malformed_length'
  /** The remaining length announced (at least this much, when cut short). */
  announced: number
  limit: number
  authenticated: boolean
}

/**
 * Follows packet boundaries in a stream of MQTT bytes without keeping any of them: per
 * packet, one type byte, a 1–4 byte variable length, then that many body bytes skipped.
 */
export class PacketScanner {
  authenticated = false
  private state: 'type' | 'length' = 'type'
  private length = 0
  private multiplier = 1
  private lengthBytes = 0
  private skip = 0

  constructor(private readonly limits: PacketLimits) {}

  get limit(): number {
    return this.authenticated ? this.limits.afterAuth : this.limits.beforeAuth
  }

  /** Scans a chunk; null while every packet is within the limit. */
  feed(chunk: Uint8Array): PacketRefusal | null {
    let i = 0
    while (i < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i)
        this.skip -= n
        i += n
        continue
      }
      const byte = chunk[i++]!
      if (this.state === 'type') {
        this.state = 'length'
        this.length = 0
        this.multiplier = 1
        this.lengthBytes = 0
        continue
      }
      this.length += (byte & 0x7f) * this.multiplier
      this.multiplier *= 128
      this.lengthBytes++
      // The length only grows with more bytes: refuse as soon as it is over.
      if (this.length > this.limit) return { reason: 'too_large', announced: this.length, limit: this.limit, authenticated: this.authenticated }
      if (byte & 0x80) {
        if (this.lengthBytes === 4) return { reason: 'malformed_length', announced: this.length, limit: this.limit, authenticated: this.authenticated }
        continue
      }
      this.state = 'type'
      this.skip = this.length
    }
    return null
  }
}

/**
 * The connection as aedes sees it: bytes from `inner` pass through once scanned; a packet
 * over the limit destroys both ends. Writes, end and destroy go to `inner`.
 */
export class GuardedConnection extends Duplex {
  readonly scanner: PacketScanner
  private refused = false

  constructor(
    readonly inner: Duplex,
    limits: PacketLimits,
    private readonly onRefuse: (refusal: PacketRefusal) => void,
  ) {
    super({ allowHalfOpen: false })
    this.scanner = new PacketScanner(limits)
    inner.on('data', (chunk: Buffer) => {
      if (this.refused) return
      const refusal = this.scanner.feed(chunk)
      if (refusal) {
        this.refused = true
        inner.pause()
        this.onRefuse(refusal)
        inner.destroy()
        this.destroy()
        return
      }
      if (!this.push(chunk)) inner.pause()
    })
    inner.once('end', () => this.push(null))
    inner.once('error', (err: Error) => this.destroy(err))
    inner.once('close', () => this.destroy())
  }

  /** The broker accepted the CONNECT: the device limit applies from now on. */
  authenticated(): void {
    this.scanner.authenticated = true
  }

  override _read(): void {
    this.inner.resume()
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.inner.destroyed) return cb(new Error('connection closed'))
    // Done once `inner` took it (as a socket's own write is); wait only when it is full.
    // A write error reaches us as inner's `error`, which destroys this stream.
    if (this.inner.write(chunk, encoding)) cb()
    else this.inner.once('drain', () => cb())
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.inner.end(() => cb())
  }

  override _destroy(err: Error | null, cb: (err: Error | null) => void): void {
    if (!this.inner.destroyed) this.inner.destroy()
    cb(err)
  }
}
