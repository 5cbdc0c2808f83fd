/**
 * Ready-made serial commands per panel protocol, computed by the codecs the agent uses
 * (so a preset, a poll and a reply check never disagree): power on/off/status, every
 * input source the codec knows, mute/unmute. Each command is in the serial-template
 * item shape (`value`, `encoding`, `eol`) plus `hexPreview`, the exact bytes sent.
 * Text protocols (LG, PJLink) come out as `ascii` with `eol: cr`, binary ones (MDC, NEC,
 * CEC over a Pulse-Eight adapter) as `hex`. A CEC command may hold several transmissions,
 * which the agent sends one after another.
 */
import { hexPreview } from '../serial/encoding.js'
import { Cec } from './Cec.js'
import { LgCommercial } from './LgCommercial.js'
import { NecLfd } from './NecLfd.js'
import { PANEL_INPUTS, PANEL_PROTOCOL_NAMES, type PanelInput, type PanelProtocol, type PanelProtocolName } from './PanelProtocol.js'
import { PjLink } from './PjLink.js'
import { SamsungMdc } from './SamsungMdc.js'

export interface PresetCommand {
  /** Stable key: `power.on`, `power.off`, `power.status`, `input.hdmi1`…, `input.player` (CEC), `volume.mute`, `volume.unmute`. */
  key: string
  name: string
  value: string
  encoding: 'ascii' | 'hex'
  eol: 'none' | 'cr'
  hexPreview: string
}

export interface PanelPreset {
  protocol: PanelProtocolName
  label: string
  commands: PresetCommand[]
}

const CODECS: Readonly<Record<PanelProtocolName, PanelProtocol>> = { 'samsung-mdc': SamsungMdc, lg: LgCommercial, nec: NecLfd, pjlink: PjLink, cec: Cec }

export const PRESET_LABELS: Readonly<Record<PanelProtocolName, string>> = {
  'samsung-mdc': 'Samsung MDC',
  lg: 'LG (RS232 commercial)',
  nec: 'NEC LFD',
  pjlink: 'PJLink (class 1)',
  cec: 'HDMI-CEC (Pulse-Eight USB-CEC adapter)',
}

export const INPUT_LABELS: Readonly<Record<PanelInput, string>> = {
  hdmi1: 'HDMI 1',
  hdmi2: 'HDMI 2',
  hdmi3: 'HDMI 3',
  hdmi4: 'HDMI 4',
  displayport: 'DisplayPort',
  dvi: 'DVI',
  pc: 'PC (VGA)',
}

/** Set ids the protocol can address, as a sentence for an error message; null when `setId` is fine. */
export function presetSetIdProblem(protocol: PanelProtocolName, setId: number): string | null {
  if (!Number.isInteger(setId) || setId < 0 || setId > 255) return `setId must be an integer 0–255, got ${setId}`
  try {
    CODECS[protocol].powerQuery(setId)
    return null
  } catch (e) {
    return (e as Error).message
  }
}

/** A frame as a template item: printable text (+ a final CR) → ascii, anything else → hex. */
export function frameAsItem(frame: Uint8Array): Pick<PresetCommand, 'value' | 'encoding' | 'eol' | 'hexPreview'> {
  const bytes = Buffer.from(frame)
  const body = bytes.at(-1) === 0x0d ? bytes.subarray(0, -1) : bytes
  const printable = body.length > 0 && body.every((b) => b >= 0x20 && b <= 0x7e)
  if (printable) return { value: body.toString('latin1'), encoding: 'ascii', eol: body.length < bytes.length ? 'cr' : 'none', hexPreview: hexPreview(bytes) }
  return { value: hexPreview(bytes), encoding: 'hex', eol: 'none', hexPreview: hexPreview(bytes) }
}

/** The commands of one protocol for one set id. Throws RangeError when the protocol cannot address `setId`. */
export function panelPreset(protocol: PanelProtocolName, setId = 1): PanelPreset {
  const problem = presetSetIdProblem(protocol, setId)
  if (problem) throw new RangeError(problem)
  const codec = CODECS[protocol]
  const commands: PresetCommand[] = []
  const add = (key: string, name: string, frame: Uint8Array) => commands.push({ key, name, ...frameAsItem(frame) })
  add('power.on', 'Power on', codec.powerOn(setId))
  add('power.off', 'Power off', codec.powerOff(setId))
  add('power.status', 'Power status', codec.powerQuery(setId))
  for (const input of codec.inputs ?? PANEL_INPUTS) add(`input.${input}`, `Input ${INPUT_LABELS[input]}`, codec.setInput(setId, input))
  if (codec.selectPlayer) add('input.player', 'Input: this player', codec.selectPlayer(setId))
  if (codec.inputQuery) add('input.status', 'Input status', codec.inputQuery(setId))
  add('volume.mute', 'Mute', codec.setMute(setId, true))
  add('volume.unmute', 'Unmute', codec.setMute(setId, false))
  return { protocol, label: PRESET_LABELS[protocol], commands }
}

/** Every protocol's preset for a set id; protocols that cannot address it are left out. */
export function panelPresets(setId = 1): PanelPreset[] {
  return PANEL_PROTOCOL_NAMES.filter((p) => presetSetIdProblem(p, setId) === null).map((p) => panelPreset(p, setId))
}
