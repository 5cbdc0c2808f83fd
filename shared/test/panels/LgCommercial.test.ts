import t from 'tap'
import {
  LgCommercial,
  encodeLgCommand,
  encodeLgReply,
  parseLgCommand,
  parseLgReply,
  createLgReplyFramer,
  createLgCommandFramer,
  isPanelProtocolError,
} from '../../src/panels/index.js'
const show = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).toUpperCase().padStart(2, '0')).join(' ')

const s = (b: Buffer) => b.toString('latin1')

t.test('command vectors', async (t) => {
  t.equal(s(LgCommercial.powerOn(1)), 'ka 01 01\r')
  t.equal(show(LgCommercial.powerOn(1)), '6B 61 20 30 31 20 30 31 0D')
  t.equal(s(LgCommercial.powerOff(1)), 'ka 01 00\r')
  t.equal(s(LgCommercial.powerQuery(1)), 'ka 01 ff\r')
  t.equal(s(LgCommercial.setVolume!(10, 100)), 'kf 0a 64\r')
  t.equal(s(LgCommercial.setMute(1, true)), 'ke 01 00\r', 'mute is inverted')
  t.equal(s(LgCommercial.setMute(1, false)), 'ke 01 01\r')
  t.equal(s(LgCommercial.setInput(1, 'hdmi1')), 'xb 01 90\r')
  t.equal(s(LgCommercial.setInput(1, 0xa0)), 'xb 01 a0\r')
  t.equal(LgCommercial.expectsReply(0), false, 'set id 00 is broadcast')
  t.equal(LgCommercial.expectsReply(1), true)
  t.throws(() => encodeLgCommand({ cmd: 'KA', id: 1, data: Uint8Array.of(1) }), RangeError)
  t.throws(() => encodeLgCommand({ cmd: 'ka', id: 1, data: new Uint8Array() }), RangeError)
})

t.test('replies', async (t) => {
  const ok = encodeLgReply({ cmd2: 'a', id: 1, ok: true, data: Uint8Array.of(1) })
  t.equal(s(ok), 'a 01 OK01x')
  t.same(LgCommercial.parseReply(ok), { ok: true, kind: 'power', id: 1, power: 'on', value: 'on' })
  t.same(LgCommercial.parseReply(Buffer.from('a 01 OK00x')), { ok: true, kind: 'power', id: 1, power: 'off', value: 'off' })
  t.same(LgCommercial.parseReply(Buffer.from('f 01 NG01x')), { ok: false, nak: true, kind: 'volume', id: 1, errorCode: 1 })
  t.match(LgCommercial.parseReply(Buffer.from('e 01 OK00x')), { kind: 'mute', muted: true })
  t.match(LgCommercial.parseReply(Buffer.from('e 01 OK01x')), { kind: 'mute', muted: false })
  t.match(LgCommercial.parseReply(Buffer.from('f 0A OK1Ex')), { kind: 'volume', volume: 30, id: 10 })
  t.match(LgCommercial.parseReply(Buffer.from('b 01 OK90x')), { kind: 'input', input: 'hdmi1' })
})

t.test('round trips', async (t) => {
  for (const f of [LgCommercial.powerOn(3), LgCommercial.setVolume!(1, 55), LgCommercial.setInput(2, 'displayport')]) {
    t.same(encodeLgCommand(parseLgCommand(f)), f)
  }
  const multi = { cmd: 'ma', id: 1, data: Buffer.from([0, 0x12, 0x34]) }
  t.equal(s(encodeLgCommand(multi)), 'ma 01 00 12 34\r')
  t.same(parseLgCommand(encodeLgCommand(multi)), multi)
  const r = { cmd2: 'b', id: 0x20, ok: false, data: Buffer.from([3]) }
  t.same(parseLgReply(encodeLgReply(r)), r)
})

t.test('errors', async (t) => {
  const cases: [string, 'truncated' | 'invalid'][] = [
    ['', 'truncated'],
    ['a 01 OK01', 'truncated'],
    ['a 01 OK1x', 'invalid'],
    ['a 1 OK01x', 'invalid'],
    ['a 01 KO01x', 'invalid'],
    ['A01OK01x', 'invalid'],
  ]
  for (const [text, code] of cases) {
    t.throws(() => LgCommercial.parseReply(Buffer.from(text)), { code }, JSON.stringify(text))
    try {
      LgCommercial.parseReply(Buffer.from(text))
    } catch (err) {
      t.ok(isPanelProtocolError(err, code))
    }
  }
  t.throws(() => parseLgCommand(Buffer.from('ka 01 01')), { code: 'truncated' })
  t.throws(() => parseLgCommand(Buffer.from('ka 01\r')), { code: 'invalid' })
})

t.test('reply framer ends on x, skips garbage, keeps partial bytes', async (t) => {
  const f = createLgReplyFramer()
  t.same(f.push(Buffer.from('\x00\xffzz a 0')), [])
  t.same(f.push(Buffer.from('1 OK')), [])
  t.same(f.push(Buffer.from('01xf 01 NG01x')).map(s), ['a 01 OK01x', 'f 01 NG01x'])
  t.equal(f.pending, 0)
  // a CR/LF some adapters add does not disturb the next frame
  t.same(f.push(Buffer.from('\r\na 01 OK00x\r\n')).map(s), ['a 01 OK00x'])
  // garbage alone never becomes a frame, and does not grow without bound
  f.push(Buffer.alloc(1000, 0x41))
  t.ok(f.pending <= 64)
})

t.test('command framer ends on CR', async (t) => {
  const f = createLgCommandFramer()
  t.same(f.push(Buffer.from('junk\rka 01')), [])
  t.same(f.push(Buffer.from(' 01\rkf 01 ff\r')).map(s), ['ka 01 01\r', 'kf 01 ff\r'])
})
