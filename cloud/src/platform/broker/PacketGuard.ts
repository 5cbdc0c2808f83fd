// A size limit on MQTT packets, in front of aedes (which has none: it buffers a packet
// whole, whatever length the fixed header announces). The guard reads each packet's fixed
// header as bytes arrive and ends the connection as soon as an announced remaining length
// is over the limit, before the body is buffered anywhere: a few KB until the broker has
// accepted the CONNECT, the contract's payload limit plus room for the topic afterwards.
// It sits in aedes' own read path (the client's MQTT parser), not in a stream in front of
// the socket: nothing per connection but the scanner's few numbers.
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
  /** Set once a packet was refused: nothing more is scanned or parsed. */
  refused = false
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

/** What the guard of every connection shares: the limits, and what to do with a refusal. */
export interface PacketGuardOptions {
  limits: PacketLimits
  /** Called once per refused connection, before it is destroyed. */
  onRefuse(refusal: PacketRefusal, client: GuardedClient): void
  /** While it holds, what authenticated devices send is kept unparsed (see ReadHold). */
  hold?: ReadHold
}

/** The part of an aedes client the guard touches. */
export interface GuardedClient {
  id: string | null
  conn: {
    destroy(err?: Error): unknown
    destroyed?: boolean
    prependOnceListener?(event: 'end' | 'close', listener: () => void): unknown
    off?(event: 'end' | 'close', listener: () => void): unknown
  }
  _parser: { parse(buf: Buffer): unknown }
}

const SCANNER = Symbol('packetScanner')
const GUARD = Symbol('packetGuard')
const ORIGINAL = Symbol('parse')
const HELD = Symbol('held')

type GuardedParser = GuardedClient['_parser'] & {
  client: GuardedClient
  [SCANNER]: PacketScanner
  [GUARD]: PacketGuardOptions
  [ORIGINAL]: (buf: Buffer) => unknown
  /** Chunks kept while a hold is on, in arrival order, and their length. */
  [HELD]?: { chunks: Buffer[]; bytes: number; onEnd: () => void }
}

/**
 * The parser's `parse`, for every guarded client (one function, no per-connection closure):
 * aedes reads what the socket has and hands it here; each chunk is scanned before the
 * parser buffers any of it, and a packet over the limit destroys the connection instead.
 */
function guardedParse(this: GuardedParser, buf: Buffer): unknown {
  const scanner = this[SCANNER]
  if (scanner.refused) return undefined
  const refusal = scanner.feed(buf)
  if (!refusal) {
    const hold = this[GUARD].hold
    if (hold?.holding && scanner.authenticated) return hold.keep(this, buf)
    return this[ORIGINAL](buf)
  }
  scanner.refused = true
  this[GUARD].onRefuse(refusal, this.client)
  this.client.conn.destroy()
  return undefined
}

/**
 * Puts the packet size guard on a client aedes just made for a connection (`aedes.handle`
 * returns it): its MQTT parser only ever sees bytes the scanner let through. No stream
 * between the socket and aedes: writes go to the socket itself.
 */
export function guardClient(client: GuardedClient, options: PacketGuardOptions): void {
  const parser = client._parser as GuardedParser
  parser[SCANNER] = new PacketScanner(options.limits)
  parser[GUARD] = options
  parser[ORIGINAL] = parser.parse
  parser.parse = guardedParse
}

/** The broker accepted the client's CONNECT: the device limit applies from now on. */
export function markAuthenticated(client: unknown): void {
  const scanner = (client as { _parser?: Partial<GuardedParser> } | null)?._parser?.[SCANNER]
  if (scanner) scanner.authenticated = true
}

/**
 * Holds what connected devices send while a fan-out goes out: between a hold's start and its
 * end, each chunk an authenticated device sends is scanned (the size limit still applies at
 * once) and kept instead of parsed; at the end every kept chunk is parsed, per device in
 * arrival order, as if it had all arrived then. The fan-out's writes then do not share the
 * event loop with the acknowledgements and reports the devices send back meanwhile, which
 * are handled together afterwards. A device that is still connecting is never held (its
 * CONNECT goes on), a hold ends by itself after `maxHoldMs`, and a device whose kept bytes
 * pass `maxBytesPerDevice` is parsed at once. Nothing per connection but the kept chunks.
 */
export class ReadHold {
  private holds = 0
  private timer: ReturnType<typeof setTimeout> | null = null
  private readonly kept = new Set<GuardedParser>()

  constructor(
    readonly maxHoldMs = 2000,
    readonly maxBytesPerDevice = 256 * 1024,
  ) {}

  /** True while reads are held. */
  get holding(): boolean {
    return this.holds > 0 && this.timer !== null
  }

  /** Starts holding (holds nest); the returned function ends this one (calling it twice is harmless). */
  begin(): () => void {
    if (this.holds++ === 0) {
      this.timer = setTimeout(() => this.release(), this.maxHoldMs)
      this.timer.unref?.()
    }
    let ended = false
    return () => {
      if (ended) return
      ended = true
      if (--this.holds === 0) this.release()
    }
  }

  /** The guard's parse while holding: keeps the chunk (or parses what the device sent so far, past the bound). */
  keep(parser: GuardedParser, buf: Buffer): unknown {
    let held = parser[HELD]
    if (!held) {
      // A device that leaves meanwhile: what it sent is parsed before aedes closes its client.
      const onEnd = () => void this.parse(parser)
      held = parser[HELD] = { chunks: [], bytes: 0, onEnd }
      parser.client.conn.prependOnceListener?.('end', onEnd)
      parser.client.conn.prependOnceListener?.('close', onEnd)
    }
    held.chunks.push(buf)
    held.bytes += buf.length
    this.kept.add(parser)
    if (held.bytes > this.maxBytesPerDevice) return this.parse(parser)
    return undefined
  }

  /** Parses everything kept. Later chunks are parsed as they come until the next hold. */
  private release(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    for (const parser of this.kept) this.parse(parser)
  }

  private parse(parser: GuardedParser): unknown {
    const held = parser[HELD]
    parser[HELD] = undefined
    this.kept.delete(parser)
    if (!held) return undefined
    parser.client.conn.off?.('end', held.onEnd)
    parser.client.conn.off?.('close', held.onEnd)
    if (parser[SCANNER].refused) return undefined
    return parser[ORIGINAL](held.chunks.length === 1 ? held.chunks[0]! : Buffer.concat(held.chunks, held.bytes))
  }
}
