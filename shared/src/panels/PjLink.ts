/**
 * PJLink (projectors), ASCII over TCP 4352, every message ends with CR.
 *
 * Greeting from the projector: "PJLINK 0\r" (no auth) or "PJLINK 1 <random>\r".
 * Command: "%1POWR 1\r"; reply "%1POWR=OK\r" or "=ERR1"…"=ERR4"
 * (1 undefined command, 2 out of parameter, 3 unavailable time, 4 projector
 * failure); "PJLINK ERRA\r" on an authentication error.
 * POWR ? answers 0 standby, 1 on, 2 cooling, 3 warm-up.
 * PJLink has no absolute volume, so setVolume is absent. "Mute" is audio mute
 * (AVMT 21/20); AVMT 31/30 would also blank the picture.
 */
import { TerminatedFramer, type Framer } from './Framer.js'
import { PanelProtocolError } from './PanelProtocolError.js'
import type { PanelInput, PanelPower, PanelProtocol, PanelReply, PanelReplyKind } from './PanelProtocol.js'

export const PJLINK_ERRORS = ['ERR1', 'ERR2', 'ERR3', 'ERR4'] as const

export const PJLINK_INPUTS: Readonly<Record<PanelInput, string>> = {
  pc: '11',
  hdmi1: '31',
  hdmi2: '32',
  hdmi3: '33',
  hdmi4: '34',
  dvi: '35',
  displayport: '36',
}

export const PjLinkPower = { standby: '0', on: '1', cooling: '2', warming: '3' } as const

export interface PjLinkCommandFrame {
  /** Protocol class, '1' for the common commands. */
  cls: '1' | '2'
  /** Four characters, e.g. "POWR". */
  cmd: string
  /** "1", "0", "?", "31" … */
  param: string
}

export interface PjLinkReplyFrame {
  cls: '1' | '2'
  cmd: string
  /** "OK", "ERR1".., or the queried value. */
  value: string
}

export interface PjLinkGreeting {
  auth: boolean
  /** The random seed when auth is required. */
  random?: string
  /** "PJLINK ERRA": wrong password. */
  authError?: boolean
}

function checkCmd(cmd: string): void {
  if (!/^[A-Z0-9]{4}$/.test(cmd)) throw new RangeError(`PJLink command must be four uppercase characters, got "${cmd}"`)
}

function checkText(what: string, s: string): void {
  if (!/^[\x20-\x7e]*$/.test(s)) throw new RangeError(`PJLink ${what} must be printable ASCII`)
}

export function encodePjLinkCommand(f: PjLinkCommandFrame): Buffer {
  checkCmd(f.cmd)
  checkText('parameter', f.param)
  return Buffer.from(`%${f.cls}${f.cmd} ${f.param}\r`, 'latin1')
}

export function encodePjLinkReply(f: PjLinkReplyFrame): Buffer {
  checkCmd(f.cmd)
  checkText('value', f.value)
  return Buffer.from(`%${f.cls}${f.cmd}=${f.value}\r`, 'latin1')
}

export function encodePjLinkGreeting(g: PjLinkGreeting): Buffer {
  if (g.authError) return Buffer.from('PJLINK ERRA\r', 'latin1')
  return Buffer.from(g.auth ? `PJLINK 1 ${g.random ?? '00000000'}\r` : 'PJLINK 0\r', 'latin1')
}

function text(frame: Uint8Array, what: string): string {
  const s = Buffer.from(frame).toString('latin1')
  if (!s.endsWith('\r')) throw new PanelProtocolError('truncated', `PJLink ${what}: no CR at the end`, frame)
  return s.slice(0, -1)
}

export function parsePjLinkCommand(frame: Uint8Array): PjLinkCommandFrame {
  const s = text(frame, 'command')
  const m = /^%([12])([A-Za-z0-9]{4}) ([\x20-\x7e]*)$/.exec(s)
  if (!m) throw new PanelProtocolError('invalid', `PJLink command ${JSON.stringify(s)} is not "%1CMND param"`, frame)
  return { cls: m[1] as '1' | '2', cmd: m[2]!.toUpperCase(), param: m[3]! }
}

export function isPjLinkGreeting(frame: Uint8Array): boolean {
  return Buffer.from(frame).subarray(0, 7).toString('latin1') === 'PJLINK '
}

export function parsePjLinkGreeting(frame: Uint8Array): PjLinkGreeting {
  const s = text(frame, 'greeting')
  if (s === 'PJLINK 0') return { auth: false }
  if (s === 'PJLINK ERRA') return { auth: true, authError: true }
  const m = /^PJLINK 1 ([\x21-\x7e]+)$/.exec(s)
  if (!m) throw new PanelProtocolError('invalid', `PJLink greeting ${JSON.stringify(s)} is not "PJLINK 0|1 …"`, frame)
  return { auth: true, random: m[1]! }
}

export function parsePjLinkReply(frame: Uint8Array): PjLinkReplyFrame {
  const s = text(frame, 'reply')
  const m = /^%([12])([A-Za-z0-9]{4})=([\x20-\x7e]*)$/.exec(s)
  if (!m) throw new PanelProtocolError('invalid', `PJLink reply ${JSON.stringify(s)} is not "%1CMND=value"`, frame)
  return { cls: m[1] as '1' | '2', cmd: m[2]!.toUpperCase(), value: m[3]! }
}

export function pjLinkPower(code: string): PanelPower | undefined {
  return ({ '0': 'standby', '1': 'on', '2': 'cooling', '3': 'warming' } as const)[code as '0' | '1' | '2' | '3']
}

export function pjLinkInputName(code: string): string {
  for (const [name, c] of Object.entries(PJLINK_INPUTS)) if (c === code) return name
  return code
}

export function interpretPjLinkReply(frame: Uint8Array): PanelReply {
  if (isPjLinkGreeting(frame)) {
    const g = parsePjLinkGreeting(frame)
    if (g.authError) return { ok: false, nak: true, kind: 'greeting', errorCode: 'ERRA' }
    return { ok: true, kind: 'greeting', value: g.auth ? 'auth' : 'open' }
  }
  const r = parsePjLinkReply(frame)
  const kinds: Record<string, PanelReplyKind> = { POWR: 'power', INPT: 'input', AVMT: 'mute' }
  const kind = kinds[r.cmd] ?? 'other'
  if (/^ERR[1-4A]$/.test(r.value)) return { ok: false, nak: true, kind, errorCode: r.value }
  const out: PanelReply = { ok: true, kind }
  if (r.value === 'OK') return out
  switch (kind) {
    case 'power': {
      const power = pjLinkPower(r.value)
      if (!power) throw new PanelProtocolError('invalid', `PJLink POWR value "${r.value}" is not 0–3`, frame)
      out.value = out.power = power
      break
    }
    case 'input':
      out.value = out.input = pjLinkInputName(r.value)
      break
    case 'mute':
      out.value = out.muted = /^[23]1$/.test(r.value)
      break
    default:
      out.value = r.value
  }
  return out
}

export function createPjLinkReplyFramer(): Framer {
  return new TerminatedFramer({ header: /%[12][A-Za-z0-9]{4}=|PJLINK /, terminator: 0x0d, maxLength: 160 })
}

export function createPjLinkCommandFramer(): Framer {
  return new TerminatedFramer({ header: /%[12][A-Za-z0-9]{4} /, terminator: 0x0d, maxLength: 160 })
}

const cmd = (c: string, param: string) => encodePjLinkCommand({ cls: '1', cmd: c, param })

export const PjLink: PanelProtocol = {
  name: 'pjlink',
  defaultTcpPort: 4352,
  serial: { baudRate: 9600, dataBits: 8, parity: 'none', stopBits: 1 },
  powerOn: () => cmd('POWR', '1'),
  powerOff: () => cmd('POWR', '0'),
  powerQuery: () => cmd('POWR', '?'),
  setInput: (_id, input) => cmd('INPT', typeof input === 'number' ? String(input) : PJLINK_INPUTS[input]),
  inputQuery: () => cmd('INPT', '?'),
  setMute: (_id, muted) => cmd('AVMT', muted ? '21' : '20'),
  expectsReply: () => true,
  parseReply: interpretPjLinkReply,
  createReplyFramer: createPjLinkReplyFramer,
  createCommandFramer: createPjLinkCommandFramer,
}
