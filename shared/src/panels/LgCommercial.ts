/**
 * LG commercial displays ("LG RS232C" / SuperSign control), ASCII, 9600 8N1.
 *
 * Command: "[cmd1][cmd2] [set id] [data]\r"  e.g. "ka 01 01\r" (power on set 1)
 * Reply:   "[cmd2] [set id] OK[data]x" or "... NG[data]x"  e.g. "a 01 OK01x"
 * Set id and data are two hex characters each (written lowercase here, read in
 * any case); data FF reads the current value; set id 00 addresses all sets and
 * no reply can be relied on. Replies end with a lowercase 'x', not CR.
 * Mute (ke) is inverted: 00 = muted, 01 = unmuted.
 */
import { TerminatedFramer, type Framer } from './Framer.js'
import { PanelProtocolError } from './PanelProtocolError.js'
import type { PanelInput, PanelProtocol, PanelReply, PanelReplyKind } from './PanelProtocol.js'

export const LgCommand = { power: 'ka', volume: 'kf', mute: 'ke', input: 'xb' } as const
export const LG_READ = 0xff
export const LG_BROADCAST_ID = 0x00

/** Common codes for `xb`; models differ, so setInput also takes a raw code. */
export const LG_INPUTS: Readonly<Record<PanelInput, number>> = {
  hdmi1: 0x90,
  hdmi2: 0x91,
  hdmi3: 0x92,
  hdmi4: 0x93,
  displayport: 0xc0,
  dvi: 0x70,
  pc: 0x60,
}
/** HDMI1 with PC timing; no cross-protocol name. */
export const LG_INPUT_HDMI1_PC = 0xa0

export interface LgCommandFrame {
  /** Two letters, e.g. "ka". */
  cmd: string
  id: number
  /** Usually one byte; several are sent space-separated. */
  data: Uint8Array
}

export interface LgReplyFrame {
  /** The second letter of the command answered, e.g. "a" for ka. */
  cmd2: string
  id: number
  ok: boolean
  data: Uint8Array
}

const h2 = (n: number) => n.toString(16).padStart(2, '0')

function byte(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 0 || v > 0xff) throw new RangeError(`LG ${name} must be a byte, got ${v}`)
  return v
}

export function encodeLgCommand(f: LgCommandFrame): Buffer {
  if (!/^[a-z]{2}$/.test(f.cmd)) throw new RangeError(`LG command must be two lowercase letters, got "${f.cmd}"`)
  if (f.data.length === 0) throw new RangeError('LG command needs at least one data byte')
  const data = Array.from(f.data, (b) => h2(byte('data', b))).join(' ')
  return Buffer.from(`${f.cmd} ${h2(byte('id', f.id))} ${data}\r`, 'latin1')
}

export function encodeLgReply(f: LgReplyFrame): Buffer {
  if (!/^[a-z]$/.test(f.cmd2)) throw new RangeError(`LG reply command must be one lowercase letter, got "${f.cmd2}"`)
  const data = Array.from(f.data, (b) => h2(byte('data', b))).join('')
  return Buffer.from(`${f.cmd2} ${h2(byte('id', f.id))} ${f.ok ? 'OK' : 'NG'}${data}x`, 'latin1')
}

function hexBytes(s: string): Buffer {
  return Buffer.from(s, 'hex')
}

const COMMAND_RE = /^([a-z]{2}) ([0-9a-f]{2})((?: [0-9a-f]{2})+)\r$/i
const REPLY_RE = /^([a-z]) ([0-9a-f]{2}) (OK|NG)((?:[0-9a-f]{2})*)x$/i

export function parseLgCommand(frame: Uint8Array): LgCommandFrame {
  const text = Buffer.from(frame).toString('latin1')
  if (!text.endsWith('\r')) throw new PanelProtocolError('truncated', 'LG command: no CR at the end', frame)
  const m = COMMAND_RE.exec(text)
  if (!m) throw new PanelProtocolError('invalid', `LG command: ${JSON.stringify(text)} is not "xx ii dd\\r"`, frame)
  return { cmd: m[1]!.toLowerCase(), id: parseInt(m[2]!, 16), data: hexBytes(m[3]!.replace(/ /g, '')) }
}

export function parseLgReply(frame: Uint8Array): LgReplyFrame {
  const text = Buffer.from(frame).toString('latin1')
  if (!text.endsWith('x')) throw new PanelProtocolError('truncated', 'LG reply: no "x" at the end', frame)
  const m = REPLY_RE.exec(text)
  if (!m) throw new PanelProtocolError('invalid', `LG reply: ${JSON.stringify(text)} is not "c ii OKddx"`, frame)
  return { cmd2: m[1]!.toLowerCase(), id: parseInt(m[2]!, 16), ok: m[3] === 'OK', data: hexBytes(m[4]!) }
}

export function createLgReplyFramer(): Framer {
  return new TerminatedFramer({ header: /[a-z] [0-9a-f]{2} /i, terminator: 0x78 /* x */, maxLength: 64 })
}

export function createLgCommandFramer(): Framer {
  return new TerminatedFramer({ header: /[a-z]{2} [0-9a-f]{2} /i, terminator: 0x0d, maxLength: 128 })
}

export function lgInputName(code: number): string {
  for (const [name, c] of Object.entries(LG_INPUTS)) if (c === code) return name
  return `0x${h2(code)}`
}

export function interpretLgReply(r: LgReplyFrame): PanelReply {
  const kinds: Record<string, PanelReplyKind> = { a: 'power', f: 'volume', e: 'mute', b: 'input' }
  const kind = kinds[r.cmd2] ?? 'other'
  if (!r.ok) return { ok: false, nak: true, kind, id: r.id, errorCode: r.data[0] ?? 0 }
  const out: PanelReply = { ok: true, kind, id: r.id }
  const v = r.data[0]
  if (v === undefined) return out
  switch (kind) {
    case 'power':
      out.value = out.power = v === 0 ? 'off' : 'on'
      break
    case 'volume':
      out.value = out.volume = v
      break
    case 'mute':
      out.value = out.muted = v === 0 // inverted
      break
    case 'input':
      out.value = out.input = lgInputName(v)
      break
    default:
      out.value = v
  }
  return out
}

const cmd = (c: string, id: number, ...data: number[]) => encodeLgCommand({ cmd: c, id, data: Uint8Array.from(data) })

export const LgCommercial: PanelProtocol = {
  name: 'lg',
  defaultTcpPort: 9761,
  serial: { baudRate: 9600, dataBits: 8, parity: 'none', stopBits: 1 },
  powerOn: (id) => cmd(LgCommand.power, id, 0x01),
  powerOff: (id) => cmd(LgCommand.power, id, 0x00),
  powerQuery: (id) => cmd(LgCommand.power, id, LG_READ),
  setInput: (id, input) => cmd(LgCommand.input, id, typeof input === 'number' ? input : LG_INPUTS[input]),
  inputQuery: (id) => cmd(LgCommand.input, id, LG_READ),
  setVolume: (id, volume) => {
    if (!Number.isInteger(volume) || volume < 0 || volume > 100) throw new RangeError(`volume must be 0–100, got ${volume}`)
    return cmd(LgCommand.volume, id, volume)
  },
  setMute: (id, muted) => cmd(LgCommand.mute, id, muted ? 0x00 : 0x01),
  expectsReply: (id) => id !== LG_BROADCAST_ID,
  parseReply: (frame) => interpretLgReply(parseLgReply(frame)),
  createReplyFramer: createLgReplyFramer,
  createCommandFramer: createLgCommandFramer,
}
