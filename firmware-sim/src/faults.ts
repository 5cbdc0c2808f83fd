/**
 * Fault injection: what can go wrong between a panel and its host. Faults
 * combine (e.g. delay + split + garbage) and can be switched at runtime.
 */

export interface SplitFault {
  /** Bytes per chunk. */
  chunkSize: number
  /** Silence between chunks. */
  gapMs: number
}

export interface Faults {
  /** The panel does not hear commands: no reply, no state change. */
  noReply?: boolean
  /** The panel rejects every command with the protocol's NAK / NG / ERR. */
  nak?: boolean
  /** Wait this long before answering. */
  delayMs?: number
  /** Send the reply in chunks with gaps. */
  split?: SplitFault | null
  /** Bytes sent before the reply. */
  garbage?: Buffer | null
  /** Break the reply's checksum (or its syntax, for protocols without one). */
  badChecksum?: boolean
  /** Acknowledge power commands but stay as it is (a panel that does not obey). */
  ignorePower?: boolean
  /** Acknowledge standby / power off but stay on (a TV that ignores CEC Standby); power on still works. */
  ignoreStandby?: boolean
  /** CEC: the TV does not speak CEC; nothing acknowledges a message sent to it. */
  noCec?: boolean
}

export const DEFAULT_SPLIT: SplitFault = { chunkSize: 2, gapMs: 20 }
/** Line noise that cannot be mistaken for any protocol's header. */
export const DEFAULT_GARBAGE = Buffer.from([0x00, 0xff, 0x7f, 0x13])

export const FAULT_NAMES = ['no-reply', 'nak', 'delay:MS', 'split', 'garbage', 'bad-checksum', 'ignore-power', 'ignore-standby', 'no-cec'] as const

/** Parses a CLI fault ("no-reply", "nak", "delay:500", "split", "split:4:50", "garbage", "bad-checksum", "ignore-power", "ignore-standby", "no-cec"). */
export function parseFault(spec: string): Faults {
  const [name, ...args] = spec.trim().split(':')
  const num = (s: string | undefined, what: string): number => {
    const n = Number(s)
    if (s === undefined || s === '' || !Number.isInteger(n) || n < 0) {
      throw new TypeError(`fault "${spec}": ${what} must be a whole number of at least 0`)
    }
    return n
  }
  switch (name) {
    case 'no-reply':
      return { noReply: true }
    case 'nak':
      return { nak: true }
    case 'delay':
      return { delayMs: num(args[0], 'delay (ms)') }
    case 'split':
      if (args.length === 0) return { split: { ...DEFAULT_SPLIT } }
      return {
        split: {
          chunkSize: Math.max(1, num(args[0], 'chunk size')),
          gapMs: args[1] === undefined ? DEFAULT_SPLIT.gapMs : num(args[1], 'gap (ms)'),
        },
      }
    case 'garbage':
      return { garbage: args[0] ? parseGarbage(spec, args[0]) : Buffer.from(DEFAULT_GARBAGE) }
    case 'bad-checksum':
      return { badChecksum: true }
    case 'ignore-power':
      return { ignorePower: true }
    case 'ignore-standby':
      return { ignoreStandby: true }
    case 'no-cec':
      return { noCec: true }
    default:
      throw new TypeError(`unknown fault "${spec}"; use one of ${FAULT_NAMES.join(', ')}`)
  }
}

function parseGarbage(spec: string, hex: string): Buffer {
  if (!/^([0-9a-f]{2})+$/i.test(hex)) throw new TypeError(`fault "${spec}": garbage must be hex byte pairs`)
  return Buffer.from(hex, 'hex')
}

export function describeFaults(f: Faults): string[] {
  const out: string[] = []
  if (f.noReply) out.push('no-reply')
  if (f.nak) out.push('nak')
  if (f.delayMs) out.push(`delay:${f.delayMs}`)
  if (f.split) out.push(`split:${f.split.chunkSize}:${f.split.gapMs}`)
  if (f.garbage) out.push(`garbage:${f.garbage.toString('hex')}`)
  if (f.badChecksum) out.push('bad-checksum')
  if (f.ignorePower) out.push('ignore-power')
  if (f.ignoreStandby) out.push('ignore-standby')
  if (f.noCec) out.push('no-cec')
  return out
}
