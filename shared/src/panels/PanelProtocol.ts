/**
 * What the agent needs from a panel protocol, whatever the wire format:
 * frames for a few common commands, a reply parser and streaming framers.
 * Protocol-specific encode/parse functions live in each codec file.
 */
import type { Framer } from './Framer.js'

export type PanelProtocolName = 'samsung-mdc' | 'lg' | 'nec' | 'pjlink' | 'cec'
export const PANEL_PROTOCOL_NAMES: readonly PanelProtocolName[] = ['samsung-mdc', 'lg', 'nec', 'pjlink', 'cec']

export type PanelPower = 'on' | 'off' | 'standby' | 'warming' | 'cooling'

/**
 * Input names understood across protocols; each codec maps them to its own
 * codes. A codec also accepts its own numeric code for inputs not listed.
 */
export const PANEL_INPUTS = ['hdmi1', 'hdmi2', 'hdmi3', 'hdmi4', 'displayport', 'dvi', 'pc'] as const
export type PanelInput = (typeof PANEL_INPUTS)[number]

export type PanelReplyKind = 'power' | 'volume' | 'mute' | 'input' | 'status' | 'greeting' | 'other'

export interface PanelReply {
  /** The panel accepted the command (ACK / OK). */
  ok: boolean
  /** The panel answered and explicitly rejected the command. */
  nak?: boolean
  kind: PanelReplyKind
  /** Set id / monitor id the reply came from, when the protocol says. */
  id?: number
  power?: PanelPower
  volume?: number
  muted?: boolean
  /** A PanelInput name when known, else the protocol's code as hex ("0x1f") or text. */
  input?: string
  /** The kind's main value: power state, volume, mute flag or input. */
  value?: PanelPower | number | boolean | string
  /** The protocol's error code on a NAK (MDC error byte, LG NG data, PJLink ERRn, NEC result, CEC `no-ack` …). */
  errorCode?: string | number
}

export interface PanelProtocol {
  readonly name: PanelProtocolName
  /** Usual TCP port when the panel speaks the protocol over the network. */
  readonly defaultTcpPort: number | null
  readonly serial: { baudRate: number; dataBits: 8; parity: 'none'; stopBits: 1 }
  /** Frames a host sends. `id` is the set / monitor id (ignored by PJLink). */
  powerOn(id: number): Buffer
  powerOff(id: number): Buffer
  powerQuery(id: number): Buffer
  setInput(id: number, input: PanelInput | number): Buffer
  /** The named inputs `setInput` can select; absent = all of PANEL_INPUTS. */
  readonly inputs?: readonly PanelInput[]
  /** Switches the display to the player itself (CEC: Active Source); absent when the protocol cannot. */
  selectPlayer?(id: number): Buffer
  /** Asks which input is selected; absent when the protocol has no such query here. */
  inputQuery?(id: number): Buffer
  /** Absent when the protocol has no absolute volume (PJLink). */
  setVolume?(id: number, volume: number): Buffer
  setMute(id: number, muted: boolean): Buffer
  /** Whether a reply can be relied on for this id (LG/NEC broadcast ids get none). */
  expectsReply(id: number): boolean
  /** Parses one complete reply frame (as produced by the reply framer). Throws PanelProtocolError. */
  parseReply(frame: Uint8Array): PanelReply
  /**
   * Splits panel → host bytes into reply frames. `command`, when given, is the piece just
   * sent (a protocol whose reply depends on the command, like CEC's, waits for the right one).
   */
  createReplyFramer(command?: Uint8Array): Framer
  /**
   * Cuts a command into pieces written one after another, each after the previous one's
   * reply (CEC: one transmission at a time). Absent = the command is one piece.
   */
  splitCommand?(bytes: Uint8Array): Buffer[]
  /** Splits host → panel bytes into command frames (used by the simulator). */
  createCommandFramer(): Framer
  /**
   * Commands sent once each time the port opens, before any other, one exchange each
   * (CEC: the Pulse-Eight adapter is put under the host's control and told which logical
   * address to acknowledge). Absent = none.
   */
  openCommands?(): Buffer[]
}
