/**
 * Raw templates: bytes sent as the operator wrote them, with no framing. The
 * end of a reply is decided by inter-byte silence. Pure: the caller passes the
 * time, so the agent can drive it from its clock and tests need no sleeps.
 */

export const RAW_DEFAULT_SILENCE_MS = 100
export const RAW_DEFAULT_MAX_BYTES = 4096

export interface RawFraming {
  readonly kind: 'raw'
  /** A reply is complete once no byte arrived for this long. */
  readonly silenceMs: number
  /** A reply is cut at this size even without silence. */
  readonly maxBytes: number
}

export const rawFraming: RawFraming = {
  kind: 'raw',
  silenceMs: RAW_DEFAULT_SILENCE_MS,
  maxBytes: RAW_DEFAULT_MAX_BYTES,
}

/** Collects reply bytes and closes the reply after `silenceMs` without data. */
export class RawReplyCollector {
  private chunks: Buffer[] = []
  private size = 0
  private lastAt = 0

  constructor(private readonly framing: RawFraming = rawFraming) {}

  get pending(): number {
    return this.size
  }

  /** Adds bytes; returns a reply when `maxBytes` is reached. */
  push(chunk: Uint8Array, now: number): Buffer | null {
    this.chunks.push(Buffer.from(chunk))
    this.size += chunk.length
    this.lastAt = now
    return this.size >= this.framing.maxBytes ? this.take() : null
  }

  /** When the next poll could complete a reply, or null when nothing is held. */
  deadline(): number | null {
    return this.size > 0 ? this.lastAt + this.framing.silenceMs : null
  }

  /** Returns the reply once the line has been silent long enough. */
  poll(now: number): Buffer | null {
    if (this.size === 0 || now - this.lastAt < this.framing.silenceMs) return null
    return this.take()
  }

  reset(): void {
    this.chunks = []
    this.size = 0
  }

  private take(): Buffer {
    const out = Buffer.concat(this.chunks)
    this.reset()
    return out
  }
}
