import t from 'tap'
import {
  SamsungMdc,
  encodeMdcCommand,
  encodeMdcReply,
  encodeMdcStatus,
  parseMdcCommand,
  parseMdcReply,
  createMdcReplyFramer,
  createMdcCommandFramer,
  isPanelProtocolError,
  mdcChecksum,
} from '../../src/panels/index.js'
const bytes = (hex: string): Buffer => Buffer.from(hex.replace(/\s+/g, ''), 'hex')
const show = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).toUpperCase().padStart(2, '0')).join(' ')

t.test('command vectors worked out by hand', async (t) => {
  // cs = 11 + 01 + 01 + 01 = 14
  t.equal(show(SamsungMdc.powerOn(1)), 'AA 11 01 01 01 14')
  t.equal(show(SamsungMdc.powerOff(1)), 'AA 11 01 01 00 13')
  t.equal(show(SamsungMdc.powerQuery(1)), 'AA 11 01 00 12')
  // 12 + 05 + 01 + 32 = 4A
  t.equal(show(SamsungMdc.setVolume!(5, 50)), 'AA 12 05 01 32 4A')
  // 13 + 01 + 01 + 01 = 16
  t.equal(show(SamsungMdc.setMute(1, true)), 'AA 13 01 01 01 16')
  // 14 + 01 + 01 + 21 = 37
  t.equal(show(SamsungMdc.setInput(1, 'hdmi1')), 'AA 14 01 01 21 37')
  t.equal(show(SamsungMdc.setInput(1, 0x20)), 'AA 14 01 01 20 36')
  t.equal(show(encodeMdcCommand({ cmd: 0x00, id: 1, data: new Uint8Array() })), 'AA 00 01 00 01')
  // carry past 0xFF: FE + FE + 01 + 05 = 0x202 -> 02
  t.equal(mdcChecksum(bytes('AA FE FE 01 05')), 0x02)
  t.throws(() => SamsungMdc.setVolume!(1, 101), RangeError)
  t.throws(() => encodeMdcCommand({ cmd: 0x100, id: 1, data: new Uint8Array() }), RangeError)
})

t.test('reply vectors and interpretation', async (t) => {
  // FF + 01 + 03 + 41 + 11 + 01 = 156 -> 56
  const ack = encodeMdcReply({ id: 1, ack: true, cmd: 0x11, data: Uint8Array.of(1) })
  t.equal(show(ack), 'AA FF 01 03 41 11 01 56')
  t.same(SamsungMdc.parseReply(ack), { ok: true, kind: 'power', id: 1, power: 'on', value: 'on' })
  // FF + 01 + 03 + 4E + 11 + 02 = 164 -> 64
  const nak = encodeMdcReply({ id: 1, ack: false, cmd: 0x11, data: Uint8Array.of(2) })
  t.equal(show(nak), 'AA FF 01 03 4E 11 02 64')
  t.same(SamsungMdc.parseReply(nak), { ok: false, nak: true, kind: 'power', id: 1, errorCode: 2 })

  const status = encodeMdcReply({
    id: 1,
    ack: true,
    cmd: 0x00,
    data: encodeMdcStatus({ power: 1, volume: 20, mute: 0, input: 0x21, aspect: 0, timer1: 0, timer2: 0 }),
  })
  // FF 01 09 41 00 01 14 00 21 00 00 00: FF+01+09+41+01+14+21 = 0x180 -> 80
  t.equal(show(status), 'AA FF 01 09 41 00 01 14 00 21 00 00 00 80')
  t.match(SamsungMdc.parseReply(status), { ok: true, kind: 'status', power: 'on', volume: 20, muted: false, input: 'hdmi1' })
  const vol = encodeMdcReply({ id: 1, ack: true, cmd: 0x12, data: Uint8Array.of(30) })
  t.match(SamsungMdc.parseReply(vol), { kind: 'volume', volume: 30, value: 30 })
  const inp = encodeMdcReply({ id: 1, ack: true, cmd: 0x14, data: Uint8Array.of(0x99) })
  t.match(SamsungMdc.parseReply(inp), { kind: 'input', input: '0x99' })
})

t.test('round trips both directions', async (t) => {
  for (const frame of [SamsungMdc.powerOn(7), SamsungMdc.setVolume!(254, 100), SamsungMdc.powerQuery(0)]) {
    const parsed = parseMdcCommand(frame)
    t.same(encodeMdcCommand(parsed), frame)
  }
  const reply = { id: 9, ack: true, cmd: 0x13, data: Buffer.from([1]) }
  t.same(parseMdcReply(encodeMdcReply(reply)), reply)
})

t.test('errors: truncated, invalid, checksum', async (t) => {
  const cases: [string, 'truncated' | 'invalid' | 'checksum'][] = [
    ['', 'truncated'],
    ['AA FF 01', 'truncated'],
    ['AA FF 01 03 41 11 01', 'truncated'],
    ['BB FF 01 03 41 11 01 56', 'invalid'],
    ['AA 11 01 03 41 11 01 68', 'invalid'], // not a reply
    ['AA FF 01 03 41 11 01 56 00', 'invalid'], // trailing byte
    ['AA FF 01 03 58 11 01 6D', 'invalid'], // ack byte 58
    ['AA FF 01 01 41 42', 'invalid'], // len below 2
    ['AA FF 01 03 41 11 01 57', 'checksum'],
  ]
  for (const [hex, code] of cases) {
    try {
      SamsungMdc.parseReply(bytes(hex))
      t.fail(`${hex} should throw`)
    } catch (err) {
      t.ok(isPanelProtocolError(err, code), `${hex || '(empty)'} -> ${code}`)
    }
  }
  t.ok(
    isPanelProtocolError(
      catchErr(() => parseMdcCommand(bytes('AA FF 01 00 00'))),
      'invalid',
    ),
  )
})

t.test('reply framer: split, garbage, several frames, bad checksum', async (t) => {
  const ack = bytes('AA FF 01 03 41 11 01 56')
  const f = createMdcReplyFramer()
  // byte by byte
  const out: Buffer[] = []
  for (const b of ack) out.push(...f.push(Uint8Array.of(b)))
  t.same(out.map(show), [show(ack)])
  t.equal(f.pending, 0)
  // garbage (including a lone AA and an AA that is not followed by FF) before the reply
  t.same(f.push(Buffer.concat([bytes('00 13 AA AA 37'), ack.subarray(0, 3)])), [])
  t.same(f.push(Buffer.concat([ack.subarray(3), ack])).map(show), [show(ack), show(ack)])
  // a false header in garbage that swallows the real reply is resynchronised by checksum
  t.same(f.push(Buffer.concat([bytes('AA FF 02 05'), ack])).map(show), [show(ack)])
  // a genuine reply with a bad checksum still surfaces, and parse says why
  const bad = bytes('AA FF 01 03 41 11 01 57')
  const [frame] = f.push(bad)
  t.ok(frame)
  t.ok(
    isPanelProtocolError(
      catchErr(() => SamsungMdc.parseReply(frame!)),
      'checksum',
    ),
  )
  t.equal(f.pending, 0)
  f.push(bytes('AA FF'))
  t.equal(f.pending, 2)
  f.reset()
  t.equal(f.pending, 0)
})

t.test('command framer skips replies and garbage', async (t) => {
  const f = createMdcCommandFramer()
  const on = SamsungMdc.powerOn(1)
  t.same(f.push(Buffer.concat([bytes('FF AA FF'), on.subarray(0, 2)])), [])
  t.same(f.push(on.subarray(2)).map(show), [show(on)])
})

function catchErr(fn: () => unknown): unknown {
  try {
    fn()
  } catch (err) {
    return err
  }
  return undefined
}
