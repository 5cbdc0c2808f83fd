/**
 * The one error the panel codecs raise when bytes are not a valid frame.
 * `truncated`: the frame ends early (more bytes may still come);
 * `invalid`: the bytes can never be a valid frame (bad header, length, syntax);
 * `checksum`: well formed, but the checksum / BCC does not match;
 * `escape`: a byte-stuffed stream (Pulse-Eight CEC adapter) with a broken escape;
 * `addressing`: a CEC message sent to the wrong kind of address (a directed-only
 * opcode broadcast, a broadcast-only opcode directed);
 * `operand`: a CEC operand out of its range (power status 7, physical address F.0.0.0 …).
 */

export const PANEL_PROTOCOL_ERROR_CODES = ['truncated', 'invalid', 'checksum', 'escape', 'addressing', 'operand'] as const
export type PanelProtocolErrorCode = (typeof PANEL_PROTOCOL_ERROR_CODES)[number]

export class PanelProtocolError extends Error {
  override readonly name = 'PanelProtocolError'
  readonly code: PanelProtocolErrorCode
  /** The offending bytes, for traces. */
  readonly frame: Buffer | undefined

  constructor(code: PanelProtocolErrorCode, message: string, frame?: Uint8Array) {
    super(message)
    this.code = code
    this.frame = frame ? Buffer.from(frame) : undefined
  }
}

export function isPanelProtocolError(err: unknown, code?: PanelProtocolErrorCode): err is PanelProtocolError {
  return err instanceof PanelProtocolError && (code === undefined || err.code === code)
}
