import t from 'tap'
import {
  encodeCommand,
  hexPreview,
  isSerialEncodingError,
  normalizeEncoding,
  normalizeEol,
  parseHex,
  SerialEncodingError,
  tryEncodeCommand,
  SERIAL_VALUE_MAX_LENGTH,
} from '../../src/serial/index.js'

const hex = (b: Buffer) => hexPreview(b)

t.test('normalizeEncoding reads unknown values as ascii', async (t) => {
  t.equal(normalizeEncoding('hex'), 'hex')
  t.equal(normalizeEncoding(' HEX '), 'hex')
  t.equal(normalizeEncoding('ascii'), 'ascii')
  t.equal(normalizeEncoding('base64'), 'ascii')
  t.equal(normalizeEncoding(undefined), 'ascii')
  t.equal(normalizeEncoding(7), 'ascii')
})

t.test('normalizeEol reads unknown values as none', async (t) => {
  for (const v of ['none', 'cr', 'lf', 'crlf'] as const) t.equal(normalizeEol(v), v)
  t.equal(normalizeEol('CRLF'), 'crlf')
  t.equal(normalizeEol('\\r\\n'), 'none')
  t.equal(normalizeEol(null), 'none')
})

t.test('ascii with each line ending', async (t) => {
  t.equal(hex(encodeCommand({ value: 'ka 01 01', encoding: 'ascii', eol: 'cr' })), '6B 61 20 30 31 20 30 31 0D')
  t.equal(hex(encodeCommand({ value: 'A', eol: 'lf' })), '41 0A')
  t.equal(hex(encodeCommand({ value: 'A', eol: 'crlf' })), '41 0D 0A')
  t.equal(hex(encodeCommand({ value: 'A', eol: 'none' })), '41')
  t.equal(hex(encodeCommand({ value: 'A', eol: 'weird' })), '41')
  t.equal(hex(encodeCommand({ value: '\\r' })), '5C 72', 'no escape sequences')
  t.equal(hex(encodeCommand({ value: 'AA', encoding: 'bogus' })), '41 41', 'unknown encoding is ascii')
})

t.test('hex forms', async (t) => {
  t.equal(hex(encodeCommand({ value: 'AA 11 01 01 00 13', encoding: 'hex' })), 'AA 11 01 01 00 13')
  t.equal(hex(encodeCommand({ value: 'aa110101', encoding: 'hex', eol: 'cr' })), 'AA 11 01 01 0D')
  t.equal(hex(encodeCommand({ value: '0xAA 0X11\t\n01', encoding: 'hex' })), 'AA 11 01')
  t.equal(hex(encodeCommand({ value: '  0xaa11  ', encoding: 'hex' })), 'AA 11')
  t.equal(hex(parseHex('')), '')
})

t.test('errors carry codes and name the cause', async (t) => {
  const cases: [Parameters<typeof encodeCommand>[0], string, RegExp][] = [
    [{ value: '' }, 'empty', /required/],
    [{ value: undefined }, 'empty', /required/],
    [{ value: 42 }, 'empty', /string/],
    [{ value: '   ', encoding: 'hex' }, 'empty', /no bytes/],
    [{ value: 'x'.repeat(SERIAL_VALUE_MAX_LENGTH + 1) }, 'too_long', /513 characters; at most 512/],
    [{ value: 'AA 1G', encoding: 'hex' }, 'invalid_hex', /"G"/],
    [{ value: 'AA 0x', encoding: 'hex' }, 'invalid_hex', /0x/],
    [{ value: 'AA,11', encoding: 'hex' }, 'invalid_hex', /","/],
    [{ value: 'AA1 1', encoding: 'hex' }, 'odd_length', /odd number of digits in "AA1"/],
    [{ value: 'AAA', encoding: 'hex' }, 'odd_length', /odd/],
    [{ value: 'café' }, 'non_ascii', /"é" at position 4/],
  ]
  for (const [input, code, message] of cases) {
    const err = t.throws(() => encodeCommand(input)) as unknown
    t.ok(err instanceof SerialEncodingError, `${JSON.stringify(input).slice(0, 40)} is SerialEncodingError`)
    t.ok(isSerialEncodingError(err, code as never), `code ${code}`)
    t.match((err as Error).message, message)
  }
  t.equal(hex(encodeCommand({ value: 'x'.repeat(SERIAL_VALUE_MAX_LENGTH) })).length, 512 * 3 - 1, '512 is allowed')
})

t.test('tryEncodeCommand', async (t) => {
  const ok = tryEncodeCommand({ value: 'AA 11', encoding: 'hex', eol: 'cr' })
  t.same(ok.ok && ok.hexPreview, 'AA 11 0D')
  const bad = tryEncodeCommand({ value: 'ZZ', encoding: 'hex' })
  t.equal(bad.ok, false)
  t.equal(!bad.ok && bad.error.code, 'invalid_hex')
})

t.test('hexPreview', async (t) => {
  t.equal(hexPreview(Buffer.from([0xaa, 0x11, 0x01, 0x01, 0x00, 0x13])), 'AA 11 01 01 00 13')
  t.equal(hexPreview(new Uint8Array([0, 0x0f, 0xff])), '00 0F FF')
  t.equal(hexPreview(Buffer.alloc(0)), '')
})

t.test('isSerialEncodingError rejects other errors', async (t) => {
  t.notOk(isSerialEncodingError(new Error('x')))
  t.notOk(isSerialEncodingError(new SerialEncodingError('empty', 'x'), 'too_long'))
})
