/**
 * Samsung MDC (Multiple Display Control), binary, RS232 9600 8N1 or TCP 1515.
 *
 * Command: AA cmd id len data… cs      (a "get" has len 0)
 * Reply:   AA FF id len ack rcmd data… cs   (len counts ack, rcmd, data)
 * cs = sum of every byte after AA, mod 256. ack 41 'A' = ok, 4E 'N' = rejected
 * (then the single data byte is the error code).
 */
import { LengthFramer, type Framer } from './Framer.js'
import { PanelProtocolError } from './PanelProtocolError.js'
import type { PanelInput, PanelPower, PanelProtocol, PanelReply } from './PanelProtocol.js'

export const MDC_HEADER = 0xaa
export const MDC_REPLY = 0xff
export const MDC_ACK = 0x41
export const MDC_NAK = 0x4e

export const MdcCommand = {
  status: 0x00,
  power: 0x11,
  volume: 0x12,
  mute: 0x13,
  input: 0x14,
} as const

export const MdcPower = { off: 0x00, on: 0x01, reboot: 0x02 } as const

export const MDC_INPUTS: Readonly<Record<PanelInput, number>> = {
  pc: 0x14,
  dvi: 0x18,
  hdmi1: 0x21,
  hdmi2: 0x23,
  displayport: 0x25,
  hdmi3: 0x31,
  hdmi4: 0x33,
}
/** MagicInfo (the built-in player) has no cross-protocol name. */
export const MDC_INPUT_MAGICINFO = 0x20

export interface MdcCommandFrame {
  cmd: number
  id: number
  /** Empty for a "get". */
  data: Uint8Array
}

export interface MdcReplyFrame {
  id: number
  ack: boolean
  /** The command being answered. */
  cmd: number
  /** For a NAK, one byte: the error code. */
  data: Uint8Array
}

/** The fields of a status (cmd 00) reply. */
export interface MdcStatus {
  power: number
  volume: number
  mute: number
  input: number
  aspect: number
  timer1: number
  timer2: number
}

export function mdcChecksum(bytes: Uint8Array, from = 1, to = bytes.length): number {
  let sum = 0
  for (let i = from; i < to; i++) sum += bytes[i]!
  return sum & 0xff
}

function byte(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 0 || v > 0xff) throw new RangeError(`MDC ${name} must be a byte, got ${v}`)
  return v
}

function seal(body: number[]): Buffer {
  const frame = Buffer.from([...body, 0])
  frame[frame.length - 1] = mdcChecksum(frame, 1, frame.length - 1)
  return frame
}

export function encodeMdcCommand(f: MdcCommandFrame): Buffer {
  if (f.data.length > 0xff) throw new RangeError('MDC data is at most 255 bytes')
  return seal([MDC_HEADER, byte('cmd', f.cmd), byte('id', f.id), f.data.length, ...f.data])
}

export function encodeMdcReply(f: MdcReplyFrame): Buffer {
  if (f.data.length > 0xfd) throw new RangeError('MDC reply data is at most 253 bytes')
  return seal([MDC_HEADER, MDC_REPLY, byte('id', f.id), f.data.length + 2, f.ack ? MDC_ACK : MDC_NAK, byte('cmd', f.cmd), ...f.data])
}

export function encodeMdcStatus(s: MdcStatus): Uint8Array {
  return Uint8Array.from([s.power, s.volume, s.mute, s.input, s.aspect, s.timer1, s.timer2])
}

/** Checks header, length and checksum; returns the bytes between len and cs. */
function unframe(frame: Uint8Array, what: string): { second: number; id: number; payload: Buffer } {
  const buf = Buffer.from(frame)
  if (buf.length < 1) throw new PanelProtocolError('truncated', `MDC ${what}: empty frame`, buf)
  if (buf[0] !== MDC_HEADER) {
    throw new PanelProtocolError('invalid', `MDC ${what}: first byte ${hex(buf[0]!)} is not AA`, buf)
  }
  if (buf.length < 5) throw new PanelProtocolError('truncated', `MDC ${what}: ${buf.length} bytes, header needs 5`, buf)
  const len = buf[3]!
  const total = 4 + len + 1
  if (buf.length < total) {
    throw new PanelProtocolError('truncated', `MDC ${what}: length says ${total} bytes, got ${buf.length}`, buf)
  }
  if (buf.length > total) {
    throw new PanelProtocolError('invalid', `MDC ${what}: ${buf.length - total} bytes after the checksum`, buf)
  }
  const cs = mdcChecksum(buf, 1, total - 1)
  if (cs !== buf[total - 1]) {
    throw new PanelProtocolError('checksum', `MDC ${what}: checksum ${hex(buf[total - 1]!)} should be ${hex(cs)}`, buf)
  }
  return { second: buf[1]!, id: buf[2]!, payload: buf.subarray(4, 4 + len) }
}

export function parseMdcCommand(frame: Uint8Array): MdcCommandFrame {
  const { second, id, payload } = unframe(frame, 'command')
  if (second === MDC_REPLY) throw new PanelProtocolError('invalid', 'MDC command: FF is a reply, not a command', frame)
  return { cmd: second, id, data: Buffer.from(payload) }
}

export function parseMdcReply(frame: Uint8Array): MdcReplyFrame {
  const { second, id, payload } = unframe(frame, 'reply')
  if (second !== MDC_REPLY) {
    throw new PanelProtocolError('invalid', `MDC reply: second byte ${hex(second)} is not FF`, frame)
  }
  if (payload.length < 2) throw new PanelProtocolError('invalid', 'MDC reply: length below 2 (ack and command)', frame)
  const ack = payload[0]!
  if (ack !== MDC_ACK && ack !== MDC_NAK) {
    throw new PanelProtocolError('invalid', `MDC reply: ack byte ${hex(ack)} is neither 41 nor 4E`, frame)
  }
  return { id, ack: ack === MDC_ACK, cmd: payload[1]!, data: Buffer.from(payload.subarray(2)) }
}

export function parseMdcStatus(data: Uint8Array): MdcStatus {
  if (data.length < 4) throw new PanelProtocolError('truncated', `MDC status: ${data.length} data bytes, need at least 4`, data)
  return {
    power: data[0]!,
    volume: data[1]!,
    mute: data[2]!,
    input: data[3]!,
    aspect: data[4] ?? 0,
    timer1: data[5] ?? 0,
    timer2: data[6] ?? 0,
  }
}

export function mdcInputName(code: number): string {
  for (const [name, c] of Object.entries(MDC_INPUTS)) if (c === code) return name
  if (code === MDC_INPUT_MAGICINFO) return 'magicinfo'
  return `0x${code.toString(16).padStart(2, '0')}`
}

function mdcInputCode(input: PanelInput | number): number {
  return typeof input === 'number' ? byte('input', input) : MDC_INPUTS[input]
}

function mdcPower(code: number): PanelPower {
  return code === MdcPower.off ? 'off' : 'on'
}

function framerSpec(reply: boolean) {
  return {
    headerLength: 4,
    isHeaderStart: (buf: Buffer, at: number) => buf[at] === MDC_HEADER && (at + 1 >= buf.length || (buf[at + 1] === MDC_REPLY) === reply),
    frameLength: (buf: Buffer, at: number) => 4 + buf[at + 3]! + 1,
    verify: (frame: Buffer) => mdcChecksum(frame, 1, frame.length - 1) === frame[frame.length - 1],
  }
}

export function createMdcReplyFramer(): Framer {
  return new LengthFramer(framerSpec(true))
}

export function createMdcCommandFramer(): Framer {
  return new LengthFramer(framerSpec(false))
}

/** High-level reply meaning for the agent. */
export function interpretMdcReply(r: MdcReplyFrame): PanelReply {
  const kind = ({ 0: 'status', 17: 'power', 18: 'volume', 19: 'mute', 20: 'input' } as const)[r.cmd as 0 | 0x11 | 0x12 | 0x13 | 0x14] ?? 'other'
  if (!r.ack) return { ok: false, nak: true, kind, id: r.id, errorCode: r.data[0] ?? 0 }
  const out: PanelReply = { ok: true, kind, id: r.id }
  const d = r.data
  switch (kind) {
    case 'status': {
      const s = parseMdcStatus(d)
      out.power = mdcPower(s.power)
      out.volume = s.volume
      out.muted = s.mute === 1
      out.input = mdcInputName(s.input)
      out.value = out.power
      break
    }
    case 'power':
      if (d.length) out.value = out.power = mdcPower(d[0]!)
      break
    case 'volume':
      if (d.length) out.value = out.volume = d[0]!
      break
    case 'mute':
      if (d.length) out.value = out.muted = d[0] === 1
      break
    case 'input':
      if (d.length) out.value = out.input = mdcInputName(d[0]!)
      break
    default:
      break
  }
  return out
}

const cmd = (c: number, id: number, ...data: number[]) => encodeMdcCommand({ cmd: c, id, data: Uint8Array.from(data) })

export const SamsungMdc: PanelProtocol = {
  name: 'samsung-mdc',
  defaultTcpPort: 1515,
  serial: { baudRate: 9600, dataBits: 8, parity: 'none', stopBits: 1 },
  powerOn: (id) => cmd(MdcCommand.power, id, MdcPower.on),
  powerOff: (id) => cmd(MdcCommand.power, id, MdcPower.off),
  powerQuery: (id) => cmd(MdcCommand.power, id),
  setInput: (id, input) => cmd(MdcCommand.input, id, mdcInputCode(input)),
  inputQuery: (id) => cmd(MdcCommand.input, id),
  setVolume: (id, volume) => {
    if (!Number.isInteger(volume) || volume < 0 || volume > 100) throw new RangeError(`volume must be 0–100, got ${volume}`)
    return cmd(MdcCommand.volume, id, volume)
  },
  setMute: (id, muted) => cmd(MdcCommand.mute, id, muted ? 1 : 0),
  expectsReply: () => true,
  parseReply: (frame) => interpretMdcReply(parseMdcReply(frame)),
  createReplyFramer: createMdcReplyFramer,
  createCommandFramer: createMdcCommandFramer,
}

function hex(n: number): string {
  return n.toString(16).toUpperCase().padStart(2, '0')
}
