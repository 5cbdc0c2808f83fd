/**
 * The one error raised while turning a serial command (value + encoding + eol)
 * into bytes. Callers branch on `code`, never on the message; the message is
 * written for humans (the cloud puts it in a 422 `message`).
 */

export const SERIAL_ENCODING_ERROR_CODES = [
  /** The value is missing, not a string, or yields no bytes. */
  'empty',
  /** The value is longer than SERIAL_VALUE_MAX_LENGTH characters. */
  'too_long',
  /** A hex value holds something other than hex digits, whitespace and `0x`. */
  'invalid_hex',
  /** A hex group has an odd number of digits. */
  'odd_length',
  /** An ascii value holds a character outside 0x00–0x7F. */
  'non_ascii',
] as const

export type SerialEncodingErrorCode = (typeof SERIAL_ENCODING_ERROR_CODES)[number]

export class SerialEncodingError extends Error {
  override readonly name = 'SerialEncodingError'
  readonly code: SerialEncodingErrorCode

  constructor(code: SerialEncodingErrorCode, message: string) {
    super(message)
    this.code = code
  }
}

export function isSerialEncodingError(err: unknown, code?: SerialEncodingErrorCode): err is SerialEncodingError {
  return err instanceof SerialEncodingError && (code === undefined || err.code === code)
}
