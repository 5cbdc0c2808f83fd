/**
 * A device with no known protocol: a command is whatever arrives before the
 * line goes quiet; the panel echoes it or answers a configured line.
 */
import type { Personality } from './Personality.js'

export interface RawPersonalityOptions {
  /** Fixed answer to every command; omitted = echo the command back. */
  reply?: Buffer | string
  /** Silence that ends a command. */
  silenceMs?: number
}

export class RawPersonality implements Personality {
  readonly protocol = 'raw' as const
  readonly silenceMs: number
  private readonly reply: Buffer | null

  constructor(opts: RawPersonalityOptions = {}) {
    this.silenceMs = opts.silenceMs ?? 30
    this.reply = opts.reply === undefined ? null : Buffer.from(opts.reply)
  }

  greeting(): null {
    return null
  }

  answer(frame: Buffer): Buffer {
    return this.reply ? Buffer.from(this.reply) : Buffer.from(frame)
  }

  nak(): Buffer {
    return Buffer.from('ERR\r\n', 'latin1')
  }

  corrupt(reply: Buffer): Buffer {
    const out = Buffer.from(reply)
    if (out.length) out[out.length - 1] = out[out.length - 1]! ^ 0xff
    return out
  }
}
