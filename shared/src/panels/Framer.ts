/**
 * Streaming framers: feed bytes as they arrive, get complete frames back,
 * keep the partial rest. Bytes that cannot start a frame are skipped until
 * the next plausible header, so garbage on the line costs one frame at most.
 *
 * A framer only finds frame boundaries; the codec's parse function decides
 * whether the frame is valid, so a reply with a bad checksum still surfaces
 * (the agent reports "bad checksum" instead of a timeout).
 */

export interface Framer {
  /** Appends bytes; returns the frames completed by them, oldest first. */
  push(chunk: Uint8Array): Buffer[]
  /** Bytes held back waiting for the rest of a frame. */
  readonly pending: number
  /** Drops any held bytes (after a timeout, before a new command). */
  reset(): void
}

/** Frames whose length is known once a fixed-size header has arrived (MDC, NEC). */
export interface LengthFramerSpec {
  /** Smallest number of bytes needed to compute the frame length. */
  headerLength: number
  /** Could a frame start at `buf[at]`? Checked on as many bytes as are present. */
  isHeaderStart(buf: Buffer, at: number): boolean
  /** Total frame length from a complete header, or null when the header is invalid. */
  frameLength(buf: Buffer, at: number): number | null
  /** Optional integrity check; a failing frame is dropped only if a later header starts inside it. */
  verify?(frame: Buffer): boolean
}

export class LengthFramer implements Framer {
  private buf: Buffer = Buffer.alloc(0)

  constructor(private readonly spec: LengthFramerSpec) {}

  get pending(): number {
    return this.buf.length
  }

  reset(): void {
    this.buf = Buffer.alloc(0)
  }

  push(chunk: Uint8Array): Buffer[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : Buffer.from(chunk)
    const frames: Buffer[] = []
    let pos = 0
    for (;;) {
      const start = this.findHeader(pos)
      if (start < 0) {
        // keep nothing: no byte left can start a frame
        pos = this.buf.length
        break
      }
      pos = start
      if (this.buf.length - start < this.spec.headerLength) break // wait for header
      const len = this.spec.frameLength(this.buf, start)
      if (len === null) {
        pos = start + 1
        continue
      }
      if (this.buf.length - start < len) break // wait for the rest
      const frame = Buffer.from(this.buf.subarray(start, start + len))
      if (this.spec.verify && !this.spec.verify(frame)) {
        const inner = this.findHeader(start + 1)
        if (inner >= 0 && inner < start + len) {
          // the "frame" was garbage that happened to look like a header
          pos = inner
          continue
        }
      }
      frames.push(frame)
      pos = start + len
    }
    this.buf = Buffer.from(this.buf.subarray(pos))
    return frames
  }

  private findHeader(from: number): number {
    for (let i = from; i < this.buf.length; i++) {
      if (this.spec.isHeaderStart(this.buf, i)) return i
    }
    return -1
  }
}

/**
 * Text frames: a header found by regular expression (matched on the latin1
 * view of the bytes) and a terminator byte after it (LG, PJLink).
 */
export interface TerminatedFramerSpec {
  /** Must be anchored with `^` semantics via sticky flag `y`; tried at each offset. */
  header: RegExp
  terminator: number
  /** A header without a terminator within this many bytes is dropped as garbage. */
  maxLength: number
}

export class TerminatedFramer implements Framer {
  private buf: Buffer = Buffer.alloc(0)
  private readonly header: RegExp

  constructor(private readonly spec: TerminatedFramerSpec) {
    this.header = new RegExp(spec.header.source, `${spec.header.flags.replace(/[gy]/g, '')}y`)
  }

  get pending(): number {
    return this.buf.length
  }

  reset(): void {
    this.buf = Buffer.alloc(0)
  }

  push(chunk: Uint8Array): Buffer[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : Buffer.from(chunk)
    const text = this.buf.toString('latin1')
    const frames: Buffer[] = []
    let pos = 0
    while (pos < text.length) {
      const m = this.matchFrom(text, pos)
      if (!m) {
        // a header may still be arriving: keep a tail that could grow into one
        pos = this.keepPartialHeader(text, pos)
        break
      }
      const end = text.indexOf(String.fromCharCode(this.spec.terminator), m.start + m.length)
      if (end < 0) {
        if (text.length - m.start > this.spec.maxLength) {
          pos = m.start + 1
          continue
        }
        pos = m.start
        break
      }
      if (end + 1 - m.start > this.spec.maxLength) {
        pos = m.start + 1
        continue
      }
      frames.push(Buffer.from(this.buf.subarray(m.start, end + 1)))
      pos = end + 1
    }
    this.buf = Buffer.from(this.buf.subarray(pos))
    return frames
  }

  private matchFrom(text: string, from: number): { start: number; length: number } | null {
    for (let i = from; i < text.length; i++) {
      this.header.lastIndex = i
      const m = this.header.exec(text)
      if (m) return { start: i, length: m[0].length }
    }
    return null
  }

  /** Keeps the shortest tail that might still become a header (bounded by maxLength). */
  private keepPartialHeader(text: string, from: number): number {
    const tailStart = Math.max(from, text.length - this.spec.maxLength)
    return tailStart
  }
}
