/**
 * Serial command byte encoding shared by the cloud (validation, `hexPreview`,
 * expanding jobs at queue time), the agent and the simulator. Pure, no I/O.
 *
 * Rules:
 * - `encoding` is `ascii` or `hex`; anything else reads as `ascii`. Matching
 *   ignores case and surrounding whitespace ("HEX" is hex), because reading an
 *   obvious "HEX" as ascii would send the literal digits to a panel.
 * - `eol` is `none`, `cr`, `lf` or `crlf`; anything else reads as `none`
 *   (same case rule). The line ending is appended after the value.
 * - `value` has at most 512 characters and must yield at least one byte of
 *   its own (a lone line ending does not count).
 * - ascii: the literal characters, one byte each; no escape sequences
 *   (`\r` is two characters); characters above 0x7F are rejected rather than
 *   silently UTF-8 encoded.
 * - hex: groups of hex digits separated by whitespace; each group may start
 *   with `0x`/`0X` and must hold an even number of digits, so "AA 11",
 *   "0xAA 0x11", "AA11" and "aa\t11" are the same two bytes while "AA1 1" is
 *   an error instead of a guess.
 */
import { SerialEncodingError } from './SerialEncodingError.js'

export const SERIAL_VALUE_MAX_LENGTH = 512
export const SERIAL_ENCODINGS = ['ascii', 'hex'] as const
export const SERIAL_EOLS = ['none', 'cr', 'lf', 'crlf'] as const

export type SerialEncoding = (typeof SERIAL_ENCODINGS)[number]
export type SerialEol = (typeof SERIAL_EOLS)[number]

export interface SerialCommandInput {
  value: unknown
  /** Unknown or missing values read as `ascii`. */
  encoding?: unknown
  /** Unknown or missing values read as `none`. */
  eol?: unknown
}

const EOL_BYTES: Readonly<Record<SerialEol, readonly number[]>> = {
  none: [],
  cr: [0x0d],
  lf: [0x0a],
  crlf: [0x0d, 0x0a],
}

export function normalizeEncoding(encoding: unknown): SerialEncoding {
  return typeof encoding === 'string' && encoding.trim().toLowerCase() === 'hex' ? 'hex' : 'ascii'
}

export function normalizeEol(eol: unknown): SerialEol {
  if (typeof eol !== 'string') return 'none'
  const v = eol.trim().toLowerCase()
  return (SERIAL_EOLS as readonly string[]).includes(v) ? (v as SerialEol) : 'none'
}

export function eolBytes(eol: unknown): Buffer {
  return Buffer.from(EOL_BYTES[normalizeEol(eol)])
}

/** Parses hex text per the rules above; throws SerialEncodingError. */
export function parseHex(text: string): Buffer {
  const bytes: number[] = []
  const groups = text.split(/\s+/).filter((g) => g.length > 0)
  for (const group of groups) {
    const digits = /^0x/i.test(group) ? group.slice(2) : group
    if (digits.length === 0) {
      throw new SerialEncodingError('invalid_hex', `hex value has "${group}" without digits after 0x`)
    }
    const bad = /[^0-9a-fA-F]/.exec(digits)
    if (bad) {
      throw new SerialEncodingError('invalid_hex', `hex value has a non-hex character "${bad[0]}" in "${truncate(group)}"`)
    }
    if (digits.length % 2 !== 0) {
      throw new SerialEncodingError('odd_length', `hex value has an odd number of digits in "${truncate(group)}"; write each byte as two digits`)
    }
    for (let i = 0; i < digits.length; i += 2) bytes.push(parseInt(digits.slice(i, i + 2), 16))
  }
  return Buffer.from(bytes)
}

/** The bytes a command sends: value bytes followed by the line ending. */
export function encodeCommand(command: SerialCommandInput): Buffer {
  const { value } = command
  if (typeof value !== 'string' || value.length === 0) {
    throw new SerialEncodingError('empty', 'value is required and must be a non-empty string')
  }
  if (value.length > SERIAL_VALUE_MAX_LENGTH) {
    throw new SerialEncodingError('too_long', `value is ${value.length} characters; at most ${SERIAL_VALUE_MAX_LENGTH} are allowed`)
  }
  let body: Buffer
  if (normalizeEncoding(command.encoding) === 'hex') {
    body = parseHex(value)
    if (body.length === 0) {
      throw new SerialEncodingError('empty', 'hex value yields no bytes')
    }
  } else {
    for (let i = 0; i < value.length; i++) {
      if (value.charCodeAt(i) > 0x7f) {
        throw new SerialEncodingError('non_ascii', `ascii value has a non-ASCII character "${value[i]}" at position ${i + 1}`)
      }
    }
    body = Buffer.from(value, 'latin1')
  }
  return Buffer.concat([body, eolBytes(command.eol)])
}

export type EncodeResult = { ok: true; bytes: Buffer; hexPreview: string } | { ok: false; error: SerialEncodingError }

/** encodeCommand without throwing, for validators that collect errors. */
export function tryEncodeCommand(command: SerialCommandInput): EncodeResult {
  try {
    const bytes = encodeCommand(command)
    return { ok: true, bytes, hexPreview: hexPreview(bytes) }
  } catch (err) {
    if (err instanceof SerialEncodingError) return { ok: false, error: err }
    throw err
  }
}

/** Uppercase, space-separated hex pairs: `AA 11 01 01 00 13`. */
export function hexPreview(bytes: Uint8Array): string {
  let out = ''
  for (let i = 0; i < bytes.length; i++) {
    if (i > 0) out += ' '
    out += bytes[i]!.toString(16).toUpperCase().padStart(2, '0')
  }
  return out
}

function truncate(s: string): string {
  return s.length > 24 ? `${s.slice(0, 24)}…` : s
}
