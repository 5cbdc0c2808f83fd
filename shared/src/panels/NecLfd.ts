/**
 * NEC large-format displays (MultiSync external control), ASCII-hex frames,
 * 9600 8N1 or TCP 7142.
 *
 * Frame: SOH '0' dest source type len(2 hex) STX message ETX BCC CR
 * - host → monitor: dest = monitor ('A' = id 1, 'B' = 2 …, '*' = all), source '0';
 *   monitor → host: dest '0', source = monitor.
 * - type 'A' command, 'B' command reply, 'C' get, 'D' get reply, 'E' set, 'F' set reply.
 * - len counts STX through ETX; BCC = XOR of every byte after SOH up to and
 *   including ETX. BCC may itself be 0D, so frames are found by SOH and the
 *   length field, never by CR.
 *
 * Messages used here (from the external-control manual):
 * - power set (A): "C203D6" + "0001" on | "0004" off;
 *   reply (B): result(00 ok | 01 unsupported) "C203D6" mode.
 * - power status (A): "01D6"; reply (B): "02" result "D6" "00" max(4) current(4);
 *   current 0001 on, 0002 standby, 0003 suspend, 0004 off.
 * - get parameter (C): page(2) code(2); set parameter (E): page code value(4);
 *   replies (D/F): result page code type(2) max(4) current(4).
 *   Volume 00/62 (0–100), audio mute 00/8D (1 mute, 0 unmute), input 00/60.
 */
import { LengthFramer, type Framer } from './Framer.js'
import { PanelProtocolError } from './PanelProtocolError.js'
import type { PanelInput, PanelPower, PanelProtocol, PanelReply } from './PanelProtocol.js'

export const NEC_SOH = 0x01
export const NEC_STX = 0x02
export const NEC_ETX = 0x03
export const NEC_CR = 0x0d
/** The controller's address byte ('0'). */
export const NEC_CONTROLLER = 0x30
/** Address byte for all monitors ('*'). */
export const NEC_BROADCAST = 0x2a

export type NecMessageType = 'A' | 'B' | 'C' | 'D' | 'E' | 'F'

export const NecPowerMode = { on: 0x0001, standby: 0x0002, suspend: 0x0003, off: 0x0004 } as const
export const NEC_POWER_SET = 'C203D6'
export const NEC_POWER_STATUS = '01D6'

export const NecParameter = {
  input: { page: 0x00, code: 0x60 },
  volume: { page: 0x00, code: 0x62 },
  mute: { page: 0x00, code: 0x8d },
} as const

export const NEC_INPUTS: Readonly<Record<PanelInput, number>> = {
  pc: 0x01,
  dvi: 0x03,
  displayport: 0x0f,
  hdmi1: 0x11,
  hdmi2: 0x12,
  hdmi3: 0x82,
  hdmi4: 0x83,
}

export interface NecFrame {
  destination: number
  source: number
  type: NecMessageType
  /** The ASCII text between STX and ETX. */
  message: string
}

/** A frame seen from one monitor's side: `id` 0 = all, 1 = 'A' … */
export interface NecMessage {
  id: number
  type: NecMessageType
  message: string
}

export interface NecParameterReply {
  /** 0 = ok, 1 = unsupported. */
  result: number
  page: number
  code: number
  /** 0 = set parameter, 1 = momentary. */
  kind: number
  max: number
  current: number
}

export function necBcc(bytes: Uint8Array, from: number, to: number): number {
  let x = 0
  for (let i = from; i < to; i++) x ^= bytes[i]!
  return x
}

export function necAddress(id: number): number {
  if (id === 0) return NEC_BROADCAST
  if (!Number.isInteger(id) || id < 1 || id > 100) throw new RangeError(`NEC monitor id must be 0 (all) or 1–100, got ${id}`)
  return 0x40 + id
}

export function necIdFromAddress(addr: number): number {
  return addr === NEC_BROADCAST ? 0 : addr - 0x40
}

const h = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0')

export function encodeNecFrame(f: NecFrame): Buffer {
  if (!/^[\x20-\x7e]*$/.test(f.message)) throw new RangeError('NEC message must be printable ASCII')
  const len = f.message.length + 2
  if (len > 0xff) throw new RangeError('NEC message too long')
  const head = Buffer.from([NEC_SOH, 0x30, f.destination, f.source, f.type.charCodeAt(0)])
  const body = Buffer.concat([head, Buffer.from(h(len, 2), 'latin1'), Buffer.from([NEC_STX]), Buffer.from(f.message, 'latin1'), Buffer.from([NEC_ETX])])
  return Buffer.concat([body, Buffer.from([necBcc(body, 1, body.length), NEC_CR])])
}

export function encodeNecCommand(m: NecMessage): Buffer {
  return encodeNecFrame({ destination: necAddress(m.id), source: NEC_CONTROLLER, type: m.type, message: m.message })
}

export function encodeNecReply(m: NecMessage): Buffer {
  return encodeNecFrame({ destination: NEC_CONTROLLER, source: necAddress(m.id), type: m.type, message: m.message })
}

const HEADER = 7

export function parseNecFrame(frame: Uint8Array): NecFrame {
  const buf = Buffer.from(frame)
  if (buf.length === 0) throw new PanelProtocolError('truncated', 'NEC: empty frame', buf)
  if (buf[0] !== NEC_SOH) throw new PanelProtocolError('invalid', `NEC: first byte ${h(buf[0]!, 2)} is not SOH`, buf)
  if (buf.length < HEADER) throw new PanelProtocolError('truncated', `NEC: ${buf.length} bytes, header needs ${HEADER}`, buf)
  const type = String.fromCharCode(buf[4]!)
  if (!/^[A-F]$/.test(type)) throw new PanelProtocolError('invalid', `NEC: message type "${type}" is not A–F`, buf)
  const lenText = buf.subarray(5, 7).toString('latin1')
  if (!/^[0-9A-Fa-f]{2}$/.test(lenText)) throw new PanelProtocolError('invalid', `NEC: length "${lenText}" is not hex`, buf)
  const len = parseInt(lenText, 16)
  if (len < 2) throw new PanelProtocolError('invalid', `NEC: length ${len} below 2`, buf)
  const total = HEADER + len + 2
  if (buf.length < total) throw new PanelProtocolError('truncated', `NEC: length says ${total} bytes, got ${buf.length}`, buf)
  if (buf.length > total) throw new PanelProtocolError('invalid', `NEC: ${buf.length - total} bytes after CR`, buf)
  if (buf[HEADER] !== NEC_STX || buf[HEADER + len - 1] !== NEC_ETX) {
    throw new PanelProtocolError('invalid', 'NEC: message is not enclosed in STX … ETX', buf)
  }
  if (buf[total - 1] !== NEC_CR) throw new PanelProtocolError('invalid', 'NEC: frame does not end with CR', buf)
  const bcc = necBcc(buf, 1, HEADER + len)
  if (bcc !== buf[total - 2]) {
    throw new PanelProtocolError('checksum', `NEC: BCC ${h(buf[total - 2]!, 2)} should be ${h(bcc, 2)}`, buf)
  }
  return {
    destination: buf[2]!,
    source: buf[3]!,
    type: type as NecMessageType,
    message: buf.subarray(HEADER + 1, HEADER + len - 1).toString('latin1'),
  }
}

export function parseNecCommand(frame: Uint8Array): NecMessage {
  const f = parseNecFrame(frame)
  if (f.source !== NEC_CONTROLLER) throw new PanelProtocolError('invalid', 'NEC command: source is not the controller', frame)
  if (!'ACE'.includes(f.type)) throw new PanelProtocolError('invalid', `NEC command: type ${f.type} is a reply`, frame)
  return { id: necIdFromAddress(f.destination), type: f.type, message: f.message }
}

export function parseNecReply(frame: Uint8Array): NecMessage {
  const f = parseNecFrame(frame)
  if (f.destination !== NEC_CONTROLLER) throw new PanelProtocolError('invalid', 'NEC reply: destination is not the controller', frame)
  if (!'BDF'.includes(f.type)) throw new PanelProtocolError('invalid', `NEC reply: type ${f.type} is not a reply`, frame)
  return { id: necIdFromAddress(f.source), type: f.type, message: f.message }
}

export function necParameterMessage(page: number, code: number, value?: number): string {
  return h(page, 2) + h(code, 2) + (value === undefined ? '' : h(value, 4))
}

export function encodeNecParameterReply(r: NecParameterReply): string {
  return h(r.result, 2) + h(r.page, 2) + h(r.code, 2) + h(r.kind, 2) + h(r.max, 4) + h(r.current, 4)
}

export function parseNecParameterReply(message: string, frame?: Uint8Array): NecParameterReply {
  if (!/^[0-9A-Fa-f]{16}$/.test(message)) {
    throw new PanelProtocolError('invalid', `NEC parameter reply "${message}" is not 16 hex digits`, frame)
  }
  const n = (a: number, b: number) => parseInt(message.slice(a, b), 16)
  return { result: n(0, 2), page: n(2, 4), code: n(4, 6), kind: n(6, 8), max: n(8, 12), current: n(12, 16) }
}

export function necPower(mode: number): PanelPower {
  if (mode === NecPowerMode.on) return 'on'
  if (mode === NecPowerMode.off) return 'off'
  return 'standby'
}

export function necInputName(code: number): string {
  for (const [name, c] of Object.entries(NEC_INPUTS)) if (c === code) return name
  return `0x${code.toString(16).padStart(2, '0')}`
}

export function interpretNecReply(m: NecMessage, frame?: Uint8Array): PanelReply {
  const msg = m.message.toUpperCase()
  if (m.type === 'B' && msg.slice(2, 8) === NEC_POWER_SET) {
    const result = parseInt(msg.slice(0, 2), 16)
    if (result !== 0) return { ok: false, nak: true, kind: 'power', id: m.id, errorCode: result }
    const mode = parseInt(msg.slice(8, 12), 16)
    const out: PanelReply = { ok: true, kind: 'power', id: m.id }
    if (!Number.isNaN(mode)) out.value = out.power = necPower(mode)
    return out
  }
  if (m.type === 'B' && msg.startsWith('02') && msg.slice(4, 6) === 'D6') {
    const result = parseInt(msg.slice(2, 4), 16)
    if (result !== 0) return { ok: false, nak: true, kind: 'power', id: m.id, errorCode: result }
    const mode = parseInt(msg.slice(12, 16), 16)
    if (Number.isNaN(mode)) throw new PanelProtocolError('invalid', `NEC power status "${msg}" has no current mode`, frame)
    const power = necPower(mode)
    return { ok: true, kind: 'power', id: m.id, power, value: power }
  }
  if (m.type === 'D' || m.type === 'F') {
    const p = parseNecParameterReply(msg, frame)
    const kind =
      p.code === NecParameter.volume.code ? 'volume' : p.code === NecParameter.mute.code ? 'mute' : p.code === NecParameter.input.code ? 'input' : 'other'
    if (p.result !== 0) return { ok: false, nak: true, kind, id: m.id, errorCode: p.result }
    const out: PanelReply = { ok: true, kind, id: m.id }
    if (kind === 'volume') out.value = out.volume = p.current
    else if (kind === 'mute') out.value = out.muted = p.current === 1
    else if (kind === 'input') out.value = out.input = necInputName(p.current)
    else out.value = p.current
    return out
  }
  return { ok: true, kind: 'other', id: m.id, value: msg }
}

function framerSpec(reply: boolean) {
  return {
    headerLength: HEADER,
    isHeaderStart: (buf: Buffer, at: number) => {
      if (buf[at] !== NEC_SOH) return false
      const checks: [number, (b: number) => boolean][] = [
        [1, (b) => b === 0x30],
        [2, (b) => (reply ? b === NEC_CONTROLLER : b !== NEC_CONTROLLER)],
        [3, (b) => (reply ? b !== NEC_CONTROLLER : b === NEC_CONTROLLER)],
        [4, (b) => (reply ? b === 0x42 || b === 0x44 || b === 0x46 : b === 0x41 || b === 0x43 || b === 0x45)],
        [5, isHexDigit],
        [6, isHexDigit],
      ]
      for (const [off, ok] of checks) {
        const b = buf[at + off]
        if (b === undefined) return true // not arrived yet: still plausible
        if (!ok(b)) return false
      }
      return true
    },
    frameLength: (buf: Buffer, at: number) => {
      const len = parseInt(buf.subarray(at + 5, at + 7).toString('latin1'), 16)
      return len >= 2 ? HEADER + len + 2 : null
    },
    verify: (frame: Buffer) => {
      try {
        parseNecFrame(frame)
        return true
      } catch {
        return false
      }
    },
  }
}

function isHexDigit(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)
}

export function createNecReplyFramer(): Framer {
  return new LengthFramer(framerSpec(true))
}

export function createNecCommandFramer(): Framer {
  return new LengthFramer(framerSpec(false))
}

const set = (id: number, p: { page: number; code: number }, value: number) =>
  encodeNecCommand({ id, type: 'E', message: necParameterMessage(p.page, p.code, value) })

export const NecLfd: PanelProtocol = {
  name: 'nec',
  defaultTcpPort: 7142,
  serial: { baudRate: 9600, dataBits: 8, parity: 'none', stopBits: 1 },
  powerOn: (id) => encodeNecCommand({ id, type: 'A', message: NEC_POWER_SET + h(NecPowerMode.on, 4) }),
  powerOff: (id) => encodeNecCommand({ id, type: 'A', message: NEC_POWER_SET + h(NecPowerMode.off, 4) }),
  powerQuery: (id) => encodeNecCommand({ id, type: 'A', message: NEC_POWER_STATUS }),
  setInput: (id, input) => set(id, NecParameter.input, typeof input === 'number' ? input : NEC_INPUTS[input]),
  inputQuery: (id) => encodeNecCommand({ id, type: 'C', message: necParameterMessage(NecParameter.input.page, NecParameter.input.code) }),
  setVolume: (id, volume) => {
    if (!Number.isInteger(volume) || volume < 0 || volume > 100) throw new RangeError(`volume must be 0–100, got ${volume}`)
    return set(id, NecParameter.volume, volume)
  },
  setMute: (id, muted) => set(id, NecParameter.mute, muted ? 1 : 0),
  expectsReply: (id) => id !== 0,
  parseReply: (frame) => interpretNecReply(parseNecReply(frame), frame),
  createReplyFramer: createNecReplyFramer,
  createCommandFramer: createNecCommandFramer,
}
