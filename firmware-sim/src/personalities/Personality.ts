/**
 * A personality makes the panel model speak one protocol: it frames host
 * bytes, answers each frame exactly like the real panel (using the shared
 * codecs' reply encoders) and knows how to say "no" and how to break a
 * checksum for fault injection.
 */
import type { Framer } from '@svc/shared/panels/index'
import type { Faults } from '../faults.js'
import type { PanelModel } from '../PanelModel.js'

export type SimProtocol = 'samsung-mdc' | 'lg' | 'nec' | 'pjlink' | 'cec' | 'raw'
export const SIM_PROTOCOLS: readonly SimProtocol[] = ['samsung-mdc', 'lg', 'nec', 'pjlink', 'cec', 'raw']

export interface Personality {
  readonly protocol: SimProtocol
  /** Splits host bytes into command frames. Absent for silence-framed (`raw`) personalities. */
  createFramer?(): Framer
  /** For personalities without a framer: a command ends after this much silence. */
  readonly silenceMs?: number
  /** Bytes sent when a host connects (PJLink greeting), or null. */
  greeting(model: PanelModel): Buffer | null
  /**
   * The real panel's answer to one frame, applying any state change.
   * null = the real panel stays silent (frame for another id, broadcast,
   * unparseable bytes). `faults` are the active ones, for personalities whose
   * faults are their own (CEC: `no-cec`).
   */
  answer(frame: Buffer, model: PanelModel, faults?: Faults): Buffer | null
  /** The protocol's rejection of this frame, without a state change; null when none exists. */
  nak(frame: Buffer, model: PanelModel): Buffer | null
  /** A copy of the reply that fails the receiver's integrity check. */
  corrupt(reply: Buffer): Buffer
}

/** Maps a model input name to a protocol code: known name, "0x.." code, else the fallback. */
export function inputCode(input: string, table: Readonly<Record<string, number>>, fallback: number): number {
  const known = table[input]
  if (known !== undefined) return known
  const m = /^0x([0-9a-f]{1,2})$/i.exec(input)
  return m ? parseInt(m[1]!, 16) : fallback
}
