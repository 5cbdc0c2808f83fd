/**
 * HDMI-CEC (Consumer Electronics Control, HDMI 1.4 chapter CEC) and the
 * Pulse-Eight USB-CEC adapter's serial framing.
 *
 * CEC message: one header byte (initiator << 4 | destination, 15 = broadcast
 * / unregistered), then an optional opcode and its operands; 16 bytes at most.
 * The player is Playback Device 1 (logical address 4) and talks to the TV
 * (logical address 0). The "set id" of a CEC panel is the TV's HDMI input the
 * player is plugged into (1–15): the player's physical address is `id.0.0.0`.
 *
 * Pulse-Eight adapter messages: `FF code data… FE`; any byte from FD up is sent
 * as `FD (byte - 3)`. The code's low six bits name the message, bit 7 marks the
 * last byte of a received CEC frame (EOM) and bit 6 that it was acknowledged.
 * A CEC frame goes out as TRANSMIT_ACK_POLARITY (1 for broadcast), then one
 * TRANSMIT per byte with TRANSMIT_EOM for the last; the adapter answers each
 * with COMMAND_ACCEPTED and the transmission with TRANSMIT_SUCCEEDED or
 * TRANSMIT_FAILED_ACK (nobody acknowledged: no TV, or a TV without CEC),
 * _LINE, _TIMEOUT_DATA, _TIMEOUT_LINE. Frames heard on the bus arrive as
 * FRAME_START (the header) and FRAME_DATA (each further byte).
 */
import type { Framer } from './Framer.js'
import { PanelProtocolError } from './PanelProtocolError.js'
import type { PanelInput, PanelPower, PanelProtocol, PanelReply } from './PanelProtocol.js'

// ---------------------------------------------------------------- CEC messages

export const CecAddress = {
  tv: 0,
  recording1: 1,
  recording2: 2,
  tuner1: 3,
  playback1: 4,
  audioSystem: 5,
  tuner2: 6,
  tuner3: 7,
  playback2: 8,
  recording3: 9,
  tuner4: 10,
  playback3: 11,
  backup1: 12,
  backup2: 13,
  specificUse: 14,
  /** As a destination: everyone; as an initiator: an unregistered device. */
  broadcast: 15,
} as const

/** The player's own logical address. */
export const CEC_PLAYER_ADDRESS = CecAddress.playback1

export const CecOpcode = {
  featureAbort: 0x00,
  imageViewOn: 0x04,
  textViewOn: 0x0d,
  standby: 0x36,
  userControlPressed: 0x44,
  userControlReleased: 0x45,
  routingChange: 0x80,
  activeSource: 0x82,
  givePhysicalAddress: 0x83,
  reportPhysicalAddress: 0x84,
  requestActiveSource: 0x85,
  setStreamPath: 0x86,
  giveDevicePowerStatus: 0x8f,
  reportPowerStatus: 0x90,
  inactiveSource: 0x9d,
} as const

/** <Report Power Status> operand. */
export const CecPowerStatus = { on: 0, standby: 1, toOn: 2, toStandby: 3 } as const

/** <User Control Pressed> operands used here. */
export const CecUserControl = { mute: 0x43, muteFunction: 0x65, restoreVolumeFunction: 0x66 } as const

/** <Feature Abort> reasons. */
export const CecAbortReason = { unrecognized: 0, notInCorrectMode: 1, cannotProvideSource: 2, invalidOperand: 3, refused: 4, unableToDetermine: 5 } as const

type Addressing = 'directed' | 'broadcast' | 'either'

/** Operand lengths and addressing of the opcodes this codec knows (CEC 1.4 table 8 onwards). */
export const CEC_OPCODE_RULES: Readonly<Record<number, { name: string; min: number; max: number; to: Addressing }>> = {
  [CecOpcode.featureAbort]: { name: 'Feature Abort', min: 2, max: 2, to: 'directed' },
  [CecOpcode.imageViewOn]: { name: 'Image View On', min: 0, max: 0, to: 'directed' },
  [CecOpcode.textViewOn]: { name: 'Text View On', min: 0, max: 0, to: 'directed' },
  [CecOpcode.standby]: { name: 'Standby', min: 0, max: 0, to: 'either' },
  [CecOpcode.userControlPressed]: { name: 'User Control Pressed', min: 1, max: 2, to: 'directed' },
  [CecOpcode.userControlReleased]: { name: 'User Control Released', min: 0, max: 0, to: 'directed' },
  [CecOpcode.routingChange]: { name: 'Routing Change', min: 4, max: 4, to: 'broadcast' },
  [CecOpcode.activeSource]: { name: 'Active Source', min: 2, max: 2, to: 'broadcast' },
  [CecOpcode.givePhysicalAddress]: { name: 'Give Physical Address', min: 0, max: 0, to: 'directed' },
  [CecOpcode.reportPhysicalAddress]: { name: 'Report Physical Address', min: 3, max: 3, to: 'broadcast' },
  [CecOpcode.requestActiveSource]: { name: 'Request Active Source', min: 0, max: 0, to: 'broadcast' },
  [CecOpcode.setStreamPath]: { name: 'Set Stream Path', min: 2, max: 2, to: 'broadcast' },
  [CecOpcode.giveDevicePowerStatus]: { name: 'Give Device Power Status', min: 0, max: 0, to: 'directed' },
  [CecOpcode.reportPowerStatus]: { name: 'Report Power Status', min: 1, max: 1, to: 'directed' },
  [CecOpcode.inactiveSource]: { name: 'Inactive Source', min: 2, max: 2, to: 'directed' },
}

/** Opcodes whose physical-address operand (first two bytes) must be a valid address. */
const PHYSICAL_ADDRESS_OPERAND = new Set<number>([CecOpcode.activeSource, CecOpcode.setStreamPath, CecOpcode.reportPhysicalAddress, CecOpcode.inactiveSource])

export interface CecMessage {
  initiator: number
  destination: number
  /** Absent for a polling message (header only). */
  opcode?: number
  operands: Uint8Array
}

export const CEC_MAX_MESSAGE_BYTES = 16

/** A physical address a.b.c.d is valid when every digit after a 0 is 0 too, and it is not F.F.F.F. */
export function isValidPhysicalAddress(pa: number): boolean {
  if (!Number.isInteger(pa) || pa < 0 || pa >= 0xffff) return false
  let zero = false
  for (const shift of [12, 8, 4, 0]) {
    const d = (pa >> shift) & 0xf
    if (zero && d !== 0) return false
    if (d === 0) zero = true
  }
  return true
}

export function formatPhysicalAddress(pa: number): string {
  return [12, 8, 4, 0].map((s) => ((pa >> s) & 0xf).toString(16)).join('.')
}

/** The physical address of the device on a TV's HDMI input `port` (1–15). */
export function cecPortAddress(port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 15) throw new RangeError(`CEC: the HDMI input must be 1–15, got ${port}`)
  return port << 12
}

function nibble(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 0 || v > 15) throw new RangeError(`CEC ${name} must be a logical address 0–15, got ${v}`)
  return v
}

/** Problems with a message's opcode, operands and addressing, as [error code, text]; null when fine. */
function checkMessage(m: CecMessage): [PanelProtocolError['code'], string] | null {
  if (m.opcode === undefined) return m.operands.length ? ['invalid', 'operands without an opcode'] : null
  const rule = CEC_OPCODE_RULES[m.opcode]
  if (!rule) return null // unknown opcodes pass through untouched
  if (m.operands.length < rule.min) return ['truncated', `${rule.name} needs ${rule.min} operand bytes, got ${m.operands.length}`]
  if (m.operands.length > rule.max) return ['invalid', `${rule.name} takes at most ${rule.max} operand bytes, got ${m.operands.length}`]
  const broadcast = m.destination === CecAddress.broadcast
  if (rule.to === 'directed' && broadcast) return ['addressing', `${rule.name} must be sent to one device, not broadcast`]
  if (rule.to === 'broadcast' && !broadcast) return ['addressing', `${rule.name} must be broadcast, not sent to ${m.destination}`]
  if (PHYSICAL_ADDRESS_OPERAND.has(m.opcode)) {
    const pa = (m.operands[0]! << 8) | m.operands[1]!
    if (!isValidPhysicalAddress(pa)) return ['operand', `${rule.name}: ${formatPhysicalAddress(pa)} is not a physical address`]
  }
  if (m.opcode === CecOpcode.reportPowerStatus && m.operands[0]! > 3) return ['operand', `Report Power Status: status ${m.operands[0]} is not 0–3`]
  return null
}

export function encodeCecMessage(m: CecMessage): Buffer {
  const header = (nibble('initiator', m.initiator) << 4) | nibble('destination', m.destination)
  if (m.opcode !== undefined && (!Number.isInteger(m.opcode) || m.opcode < 0 || m.opcode > 0xff))
    throw new RangeError(`CEC opcode must be a byte, got ${m.opcode}`)
  if (1 + (m.opcode === undefined ? 0 : 1) + m.operands.length > CEC_MAX_MESSAGE_BYTES)
    throw new RangeError(`CEC messages are at most ${CEC_MAX_MESSAGE_BYTES} bytes`)
  const problem = checkMessage(m)
  if (problem) throw new RangeError(`CEC: ${problem[1]}`)
  return Buffer.from([header, ...(m.opcode === undefined ? [] : [m.opcode]), ...m.operands])
}

export function parseCecMessage(bytes: Uint8Array): CecMessage {
  const buf = Buffer.from(bytes)
  if (buf.length === 0) throw new PanelProtocolError('truncated', 'CEC message: no header byte', buf)
  if (buf.length > CEC_MAX_MESSAGE_BYTES) throw new PanelProtocolError('invalid', `CEC message: ${buf.length} bytes, at most ${CEC_MAX_MESSAGE_BYTES}`, buf)
  const m: CecMessage = {
    initiator: buf[0]! >> 4,
    destination: buf[0]! & 0xf,
    ...(buf.length > 1 ? { opcode: buf[1]! } : {}),
    operands: Buffer.from(buf.subarray(2)),
  }
  const problem = checkMessage(m)
  if (problem) throw new PanelProtocolError(problem[0], `CEC message: ${problem[1]}`, buf)
  return m
}

const msg = (initiator: number, destination: number, opcode: number, ...operands: number[]): CecMessage => ({
  initiator,
  destination,
  opcode,
  operands: Uint8Array.from(operands),
})

/** The messages the panel commands are made of (player → TV unless said otherwise). */
export const cecMessages = {
  imageViewOn: () => msg(CEC_PLAYER_ADDRESS, CecAddress.tv, CecOpcode.imageViewOn),
  activeSource: (pa: number) => msg(CEC_PLAYER_ADDRESS, CecAddress.broadcast, CecOpcode.activeSource, pa >> 8, pa & 0xff),
  standby: () => msg(CEC_PLAYER_ADDRESS, CecAddress.tv, CecOpcode.standby),
  giveDevicePowerStatus: () => msg(CEC_PLAYER_ADDRESS, CecAddress.tv, CecOpcode.giveDevicePowerStatus),
  requestActiveSource: () => msg(CEC_PLAYER_ADDRESS, CecAddress.broadcast, CecOpcode.requestActiveSource),
  setStreamPath: (pa: number) => msg(CEC_PLAYER_ADDRESS, CecAddress.broadcast, CecOpcode.setStreamPath, pa >> 8, pa & 0xff),
  userControlPressed: (key: number) => msg(CEC_PLAYER_ADDRESS, CecAddress.tv, CecOpcode.userControlPressed, key),
  userControlReleased: () => msg(CEC_PLAYER_ADDRESS, CecAddress.tv, CecOpcode.userControlReleased),
}

/** The opcode that answers a query, when the message is one. */
export function cecResponseOpcode(opcode: number | undefined): number | null {
  switch (opcode) {
    case CecOpcode.giveDevicePowerStatus:
      return CecOpcode.reportPowerStatus
    case CecOpcode.requestActiveSource:
      return CecOpcode.activeSource
    case CecOpcode.givePhysicalAddress:
      return CecOpcode.reportPhysicalAddress
    default:
      return null
  }
}

export function cecPowerName(status: number): PanelPower {
  switch (status) {
    case CecPowerStatus.on:
      return 'on'
    case CecPowerStatus.toOn:
      return 'warming'
    case CecPowerStatus.toStandby:
      return 'cooling'
    default:
      return 'standby'
  }
}

/** `hdmiN` for N.0.0.0 (N ≤ 4), else the dotted address. */
export function cecInputName(pa: number): string {
  const port = pa >> 12
  if ((pa & 0xfff) === 0 && port >= 1 && port <= 4) return `hdmi${port}`
  return formatPhysicalAddress(pa)
}

// ---------------------------------------------------------------- Pulse-Eight framing

export const P8_MSGSTART = 0xff
export const P8_MSGEND = 0xfe
export const P8_MSGESC = 0xfd
export const P8_ESC_OFFSET = 3
export const P8_FRAME_EOM = 0x80
export const P8_FRAME_ACK = 0x40

export const P8Code = {
  nothing: 0x00,
  ping: 0x01,
  timeoutError: 0x02,
  highError: 0x03,
  lowError: 0x04,
  frameStart: 0x05,
  frameData: 0x06,
  receiveFailed: 0x07,
  commandAccepted: 0x08,
  commandRejected: 0x09,
  setAckMask: 0x0a,
  transmit: 0x0b,
  transmitEom: 0x0c,
  transmitIdletime: 0x0d,
  transmitAckPolarity: 0x0e,
  transmitLineTimeout: 0x0f,
  transmitSucceeded: 0x10,
  transmitFailedLine: 0x11,
  transmitFailedAck: 0x12,
  transmitFailedTimeoutData: 0x13,
  transmitFailedTimeoutLine: 0x14,
  firmwareVersion: 0x15,
  startBootloader: 0x16,
  getBuilddate: 0x17,
  setControlled: 0x18,
  getAutoEnabled: 0x19,
  setAutoEnabled: 0x1a,
} as const

/** Why a transmission failed, by result code. */
export const P8_TRANSMIT_FAILURES: Readonly<Record<number, string>> = {
  [P8Code.transmitFailedLine]: 'line',
  [P8Code.transmitFailedAck]: 'no-ack',
  [P8Code.transmitFailedTimeoutData]: 'timeout-data',
  [P8Code.transmitFailedTimeoutLine]: 'timeout-line',
}

/**
 * What an adapter that cannot hear the answers to a broadcast query (the agent's cec-ctl port:
 * the kernel hands cec-ctl the reply to a directed query only) sends after the query's transmit
 * result: the answer will not come, so the host stops waiting at once rather than at its reply
 * timeout. Pulse-Eight's NOTHING code, which an adapter never sends on its own.
 */
export function encodeP8NoAnswer(): Buffer {
  return encodeP8Message({ code: P8Code.nothing, data: new Uint8Array() })
}

/** The error code of a reply where nothing on the bus acknowledged the message. */
export const CEC_NO_ACK = 'no-ack'

export interface P8Message {
  /** Low six bits of the code byte. */
  code: number
  /** Received frames: the last byte of the CEC frame. */
  eom?: boolean
  /** Received frames: the byte was acknowledged. */
  ack?: boolean
  data: Uint8Array
}

export function encodeP8Message(m: P8Message): Buffer {
  if (!Number.isInteger(m.code) || m.code < 0 || m.code > 0x3f) throw new RangeError(`Pulse-Eight code must be 0–63, got ${m.code}`)
  const out: number[] = [P8_MSGSTART]
  const raw = [m.code | (m.eom ? P8_FRAME_EOM : 0) | (m.ack ? P8_FRAME_ACK : 0), ...m.data]
  for (const b of raw) {
    if (!Number.isInteger(b) || b < 0 || b > 0xff) throw new RangeError(`Pulse-Eight data must be bytes, got ${b}`)
    if (b >= P8_MSGESC) out.push(P8_MSGESC, b - P8_ESC_OFFSET)
    else out.push(b)
  }
  out.push(P8_MSGEND)
  return Buffer.from(out)
}

export function parseP8Message(frame: Uint8Array): P8Message {
  const buf = Buffer.from(frame)
  if (buf.length === 0) throw new PanelProtocolError('truncated', 'Pulse-Eight message: empty', buf)
  if (buf[0] !== P8_MSGSTART) throw new PanelProtocolError('invalid', `Pulse-Eight message: starts with ${hex(buf[0]!)}, not FF`, buf)
  const raw: number[] = []
  let ended = false
  for (let i = 1; i < buf.length; i++) {
    const b = buf[i]!
    if (ended) throw new PanelProtocolError('invalid', 'Pulse-Eight message: bytes after FE', buf)
    if (b === P8_MSGEND) {
      ended = true
      continue
    }
    if (b === P8_MSGSTART) throw new PanelProtocolError('invalid', 'Pulse-Eight message: FF inside a message', buf)
    if (b === P8_MSGESC) {
      const next = buf[i + 1]
      if (next === undefined) throw new PanelProtocolError('truncated', 'Pulse-Eight message: ends after an escape', buf)
      if (next >= P8_MSGESC) throw new PanelProtocolError('escape', `Pulse-Eight message: escape followed by ${hex(next)}`, buf)
      raw.push(next + P8_ESC_OFFSET)
      i++
      continue
    }
    raw.push(b)
  }
  if (!ended) throw new PanelProtocolError('truncated', 'Pulse-Eight message: no FE at the end', buf)
  if (raw.length === 0) throw new PanelProtocolError('invalid', 'Pulse-Eight message: no code byte', buf)
  const c = raw[0]!
  const m: P8Message = { code: c & 0x3f, data: Buffer.from(raw.slice(1)) }
  if (c & P8_FRAME_EOM) m.eom = true
  if (c & P8_FRAME_ACK) m.ack = true
  return m
}

/**
 * What a host tells a Pulse-Eight adapter when it opens it, as the kernel's pulse8-cec driver
 * and libcec do: SET_CONTROLLED 1 (the host drives the adapter, which stops acting on its
 * own saved settings) and SET_ACK_MASK with the bit of each logical address the adapter
 * must acknowledge on the bus (the player's, Playback Device 1). Without the mask nobody
 * acknowledges the TV's answers to the player: the TV counts them failed and sends them again.
 * Each is answered by COMMAND_ACCEPTED (COMMAND_REJECTED by an adapter that does not know it).
 */
export function encodeP8Setup(address: number = CEC_PLAYER_ADDRESS): Buffer[] {
  if (!Number.isInteger(address) || address < 0 || address > 14) throw new RangeError(`CEC logical address must be 0–14, got ${address}`)
  const mask = 1 << address
  return [
    encodeP8Message({ code: P8Code.setControlled, data: Uint8Array.of(1) }),
    encodeP8Message({ code: P8Code.setAckMask, data: Uint8Array.of(mask >> 8, mask & 0xff) }),
  ]
}

/** The adapter messages that send one CEC message (as libcec writes them: polarity, then a byte each). */
export function encodeP8Transmit(m: CecMessage): Buffer {
  const bytes = encodeCecMessage(m)
  const parts = [encodeP8Message({ code: P8Code.transmitAckPolarity, data: Uint8Array.of(m.destination === CecAddress.broadcast ? 1 : 0) })]
  bytes.forEach((b, i) => parts.push(encodeP8Message({ code: i === bytes.length - 1 ? P8Code.transmitEom : P8Code.transmit, data: Uint8Array.of(b) })))
  return Buffer.concat(parts)
}

/** The adapter messages that report a CEC message heard on the bus. */
export function encodeP8Received(m: CecMessage, ack = true): Buffer {
  const bytes = encodeCecMessage(m)
  return Buffer.concat(
    [...bytes].map((b, i) =>
      encodeP8Message({ code: i === 0 ? P8Code.frameStart : P8Code.frameData, eom: i === bytes.length - 1, ack, data: Uint8Array.of(b) }),
    ),
  )
}

export type P8Event =
  | { kind: 'transmit'; message: CecMessage; bytes: Buffer }
  | { kind: 'received'; message: CecMessage; bytes: Buffer; ack: boolean }
  | { kind: 'result'; code: number }
  | { kind: 'other'; message: P8Message }

/**
 * Turns adapter messages (either direction) into events: a CEC message once its
 * TRANSMIT_EOM / FRAME EOM byte arrives, transmit results, and anything else.
 * A CEC message that does not parse is thrown (PanelProtocolError).
 */
export class P8Assembler {
  private tx: number[] = []
  private rx: number[] = []
  private rxAck = true

  push(m: P8Message): P8Event | null {
    switch (m.code) {
      case P8Code.transmit:
      case P8Code.transmitEom: {
        if (m.data.length !== 1) throw new PanelProtocolError('invalid', 'Pulse-Eight TRANSMIT carries one byte', encodeP8Message(m))
        this.tx.push(m.data[0]!)
        if (m.code === P8Code.transmit) return null
        const bytes = Buffer.from(this.tx)
        this.tx = []
        return { kind: 'transmit', message: parseCecMessage(bytes), bytes }
      }
      case P8Code.frameStart:
      case P8Code.frameData: {
        if (m.data.length !== 1) throw new PanelProtocolError('invalid', 'Pulse-Eight FRAME_START/DATA carries one byte', encodeP8Message(m))
        if (m.code === P8Code.frameStart) {
          this.rx = []
          this.rxAck = true
        }
        this.rx.push(m.data[0]!)
        if (!m.ack) this.rxAck = false
        if (!m.eom) return null
        const bytes = Buffer.from(this.rx)
        this.rx = []
        return { kind: 'received', message: parseCecMessage(bytes), bytes, ack: this.rxAck }
      }
      case P8Code.transmitSucceeded:
      case P8Code.transmitFailedLine:
      case P8Code.transmitFailedAck:
      case P8Code.transmitFailedTimeoutData:
      case P8Code.transmitFailedTimeoutLine:
        return { kind: 'result', code: m.code }
      default:
        return { kind: 'other', message: m }
    }
  }
}

/** Splits a byte stream into `FF … FE` messages; bytes outside a message are skipped. */
export class P8MessageFramer implements Framer {
  private buf: number[] = []
  private inside = false

  get pending(): number {
    return this.buf.length
  }

  reset(): void {
    this.buf = []
    this.inside = false
  }

  push(chunk: Uint8Array): Buffer[] {
    const out: Buffer[] = []
    for (const b of chunk) {
      if (b === P8_MSGSTART) {
        this.buf = [b]
        this.inside = true
      } else if (this.inside) {
        this.buf.push(b)
        if (b === P8_MSGEND) {
          out.push(Buffer.from(this.buf))
          this.buf = []
          this.inside = false
        } else if (this.buf.length > 64) {
          this.reset() // no adapter message is this long: line noise
        }
      }
    }
    return out
  }
}

/**
 * Host → adapter framing as the adapter acts on it: one frame per CEC transmission
 * (polarity / idle time, then the TRANSMIT bytes up to TRANSMIT_EOM), and any other
 * adapter command (ping, set controlled …) as a frame of its own.
 */
export class P8TransmissionFramer implements Framer {
  private readonly messages = new P8MessageFramer()
  private held: Buffer[] = []

  get pending(): number {
    return this.messages.pending + this.held.reduce((n, b) => n + b.length, 0)
  }

  reset(): void {
    this.messages.reset()
    this.held = []
  }

  push(chunk: Uint8Array): Buffer[] {
    const out: Buffer[] = []
    for (const raw of this.messages.push(chunk)) {
      let code = -1
      try {
        code = parseP8Message(raw).code
      } catch {
        // unreadable: a frame of its own, for the adapter to reject
      }
      const partOfTransmission = code === P8Code.transmitAckPolarity || code === P8Code.transmitIdletime || code === P8Code.transmit
      this.held.push(raw)
      if (partOfTransmission) continue
      out.push(Buffer.concat(this.held))
      this.held = []
    }
    return out
  }
}

/** Every adapter message in a byte string (which must hold nothing else). */
export function splitP8Messages(bytes: Uint8Array): P8Message[] {
  const framer = new P8MessageFramer()
  const frames = framer.push(bytes)
  if (framer.pending) parseP8Message(Buffer.from(bytes).subarray(bytes.length - framer.pending)) // throws: truncated
  const total = frames.reduce((n, f) => n + f.length, 0)
  if (total !== bytes.length) throw new PanelProtocolError('invalid', 'Pulse-Eight: bytes outside FF … FE', bytes)
  return frames.map(parseP8Message)
}

/**
 * Cuts host → adapter bytes into one piece per CEC transmission (ending at its
 * TRANSMIT_EOM); other adapter commands travel with the next transmission. A
 * host waits for each transmission's result before sending the next, as libcec does.
 */
export function splitCecCommand(bytes: Uint8Array): Buffer[] {
  const buf = Buffer.from(bytes)
  const framer = new P8MessageFramer()
  const pieces: Buffer[] = []
  let from = 0
  let at = 0
  for (const frame of framer.push(buf)) {
    at = buf.indexOf(frame, at) + frame.length
    let code = -1
    try {
      code = parseP8Message(frame).code
    } catch {
      // a broken message is the adapter's to reject
    }
    if (code === P8Code.transmitEom) {
      pieces.push(buf.subarray(from, at))
      from = at
    }
  }
  if (from < buf.length) pieces.push(buf.subarray(from))
  return pieces.length ? pieces : [buf]
}

/**
 * The reply to one piece (see splitCecCommand): collects the adapter's answer
 * and emits it as one frame, made of the adapter messages that matter — the
 * transmit result, and for a query the answering CEC message. Without the
 * command (a monitor), every transmit result and every heard message is a frame.
 */
export class CecReplyFramer implements Framer {
  private readonly messages = new P8MessageFramer()
  private readonly assembler = new P8Assembler()
  private expectedResults = 0
  private results = 0
  private collected: Buffer[] = []
  private frameBytes: Buffer[] = []
  /** The query waiting for its answer: opcode, who must answer. */
  private awaiting: { opcode: number; response: number; from: number | null } | null = null
  private readonly monitor: boolean

  constructor(command?: Uint8Array) {
    this.monitor = command === undefined
    if (!command) return
    const asm = new P8Assembler()
    let last: CecMessage | null = null
    try {
      for (const m of splitP8Messages(command)) {
        const e = asm.push(m)
        if (e?.kind === 'transmit') {
          this.expectedResults++
          last = e.message
        } else if (!e || e.kind === 'other') {
          // adapter commands (ping, set controlled …) are answered by COMMAND_ACCEPTED
        }
      }
    } catch {
      // an unreadable command: the adapter's COMMAND_REJECTED (or silence) is the answer
    }
    const response = cecResponseOpcode(last?.opcode)
    if (last && response !== null) {
      this.awaiting = {
        opcode: last.opcode!,
        response,
        from: last.destination === CecAddress.broadcast ? null : last.destination,
      }
    }
  }

  get pending(): number {
    return this.messages.pending + this.collected.reduce((n, b) => n + b.length, 0)
  }

  reset(): void {
    this.messages.reset()
    this.collected = []
    this.frameBytes = []
    this.results = 0
  }

  push(chunk: Uint8Array): Buffer[] {
    const out: Buffer[] = []
    for (const raw of this.messages.push(chunk)) {
      let m: P8Message
      let e: P8Event | null
      try {
        m = parseP8Message(raw)
        if (m.code === P8Code.frameStart) this.frameBytes = []
        if (m.code === P8Code.frameStart || m.code === P8Code.frameData) this.frameBytes.push(raw)
        e = this.assembler.push(m)
      } catch {
        out.push(raw) // unreadable: let the parser say why
        continue
      }
      if (!e) continue
      if (e.kind === 'result') {
        if (e.code !== P8Code.transmitSucceeded) {
          out.push(...this.flush(raw))
          continue
        }
        this.results++
        if (this.monitor || (this.results >= this.expectedResults && !this.awaiting)) out.push(...this.flush(raw))
        else this.collected.push(raw)
        continue
      }
      if (e.kind === 'received') {
        const frame = Buffer.concat(this.frameBytes)
        this.frameBytes = []
        if (this.monitor) {
          out.push(frame)
          continue
        }
        const a = this.awaiting
        if (!a || this.results < this.expectedResults) continue
        const mm = e.message
        const fromOk = a.from === null || mm.initiator === a.from
        const answers = mm.opcode === a.response || (mm.opcode === CecOpcode.featureAbort && mm.operands[0] === a.opcode)
        if (fromOk && answers) out.push(...this.flush(frame))
        continue
      }
      if (e.kind === 'other') {
        const code = e.message.code
        // COMMAND_REJECTED ends any exchange; an adapter command without a transmission
        // (ping, set controlled …) is answered by its first message; a query's answer that
        // cannot come (encodeP8NoAnswer, after the transmit results) ends the wait for it.
        const noAnswer = code === P8Code.nothing && this.awaiting !== null && this.results >= this.expectedResults
        if (code === P8Code.commandRejected || noAnswer || (this.expectedResults === 0 && !this.monitor)) out.push(...this.flush(raw))
      }
    }
    return out
  }

  private flush(last: Buffer): Buffer[] {
    const frame = Buffer.concat([...this.collected, last])
    this.collected = []
    return [frame]
  }
}

/** Reads one reply frame (as CecReplyFramer emits it) into the panel reply. */
export function parseCecReply(frame: Uint8Array): PanelReply {
  const asm = new P8Assembler()
  let out: PanelReply | null = null
  for (const m of splitP8Messages(frame)) {
    const e = asm.push(m)
    if (!e) continue
    if (e.kind === 'result') {
      const failure = P8_TRANSMIT_FAILURES[e.code]
      if (failure) return { ok: false, nak: true, kind: 'other', errorCode: failure }
      out ??= { ok: true, kind: 'other' }
    } else if (e.kind === 'received') {
      const r = e.message
      if (r.opcode === CecOpcode.reportPowerStatus) {
        const power = cecPowerName(r.operands[0]!)
        out = { ok: true, kind: 'power', id: r.initiator, power, value: power }
      } else if (r.opcode === CecOpcode.activeSource) {
        const input = cecInputName((r.operands[0]! << 8) | r.operands[1]!)
        out = { ok: true, kind: 'input', id: r.initiator, input, value: input }
      } else if (r.opcode === CecOpcode.reportPhysicalAddress) {
        const input = formatPhysicalAddress((r.operands[0]! << 8) | r.operands[1]!)
        out = { ok: true, kind: 'other', id: r.initiator, value: input }
      } else if (r.opcode === CecOpcode.featureAbort) {
        return { ok: false, nak: true, kind: 'other', id: r.initiator, errorCode: `feature-abort:${r.operands[1]}` }
      } else {
        out ??= { ok: true, kind: 'other', id: r.initiator }
      }
    } else if (e.kind === 'other') {
      if (e.message.code === P8Code.commandRejected) return { ok: false, nak: true, kind: 'other', errorCode: 'rejected' }
      out ??= { ok: true, kind: 'other' }
    }
  }
  if (!out) throw new PanelProtocolError('truncated', 'CEC reply: no adapter answer in the frame', frame)
  return out
}

function setId(id: number): number {
  return cecPortAddress(id)
}

const send = (...messages: CecMessage[]) => Buffer.concat(messages.map(encodeP8Transmit))

/** What each input selects on a CEC TV: the device on HDMI input N (N.0.0.0). */
const CEC_INPUTS: readonly PanelInput[] = ['hdmi1', 'hdmi2', 'hdmi3', 'hdmi4']

function inputAddress(input: PanelInput | number): number {
  if (typeof input === 'number') {
    if (!isValidPhysicalAddress(input) || input === 0) throw new RangeError(`CEC: ${input} is not a physical address of a source`)
    return input
  }
  const m = /^hdmi([1-4])$/.exec(input)
  if (!m) throw new RangeError(`CEC can select HDMI inputs only, not ${input}`)
  return cecPortAddress(Number(m[1]))
}

export const Cec: PanelProtocol = {
  name: 'cec',
  defaultTcpPort: null,
  // A USB CDC device: the rate is ignored; libcec opens it at 38400.
  serial: { baudRate: 38400, dataBits: 8, parity: 'none', stopBits: 1 },
  inputs: CEC_INPUTS,
  powerOn: (id) => send(cecMessages.imageViewOn(), cecMessages.activeSource(setId(id))),
  powerOff: (id) => (setId(id), send(cecMessages.standby())),
  powerQuery: (id) => (setId(id), send(cecMessages.giveDevicePowerStatus())),
  setInput: (id, input) => (setId(id), send(cecMessages.setStreamPath(inputAddress(input)))),
  inputQuery: (id) => (setId(id), send(cecMessages.requestActiveSource())),
  selectPlayer: (id) => send(cecMessages.activeSource(setId(id))),
  setMute: (id, muted) => (
    setId(id),
    send(cecMessages.userControlPressed(muted ? CecUserControl.muteFunction : CecUserControl.restoreVolumeFunction), cecMessages.userControlReleased())
  ),
  expectsReply: () => true,
  parseReply: parseCecReply,
  createReplyFramer: (command?: Uint8Array) => new CecReplyFramer(command),
  createCommandFramer: () => new P8TransmissionFramer(),
  splitCommand: splitCecCommand,
  openCommands: () => encodeP8Setup(),
}

function hex(n: number): string {
  return n.toString(16).toUpperCase().padStart(2, '0')
}
