import t from 'tap'
import {
  NecLfd,
  encodeNecCommand,
  encodeNecReply,
  encodeNecParameterReply,
  parseNecCommand,
  parseNecReply,
  parseNecFrame,
  createNecReplyFramer,
  createNecCommandFramer,
  necParameterMessage,
  necBcc,
} from '../../src/panels/index.js'
const bytes = (hex: string): Buffer => Buffer.from(hex.replace(/\s+/g, ''), 'hex')
const show = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).toUpperCase().padStart(2, '0')).join(' ')

t.test('command vectors', async (t) => {
  // SOH '0' 'A' '0' 'A' "0C" STX "C203D60001" ETX BCC CR; BCC = XOR(30..03) = 73
  t.equal(show(NecLfd.powerOn(1)), '01 30 41 30 41 30 43 02 43 32 30 33 44 36 30 30 30 31 03 73 0D')
  t.equal(show(NecLfd.powerOff(1)), '01 30 41 30 41 30 43 02 43 32 30 33 44 36 30 30 30 34 03 76 0D')
  t.equal(show(NecLfd.powerQuery(1)), '01 30 41 30 41 30 36 02 30 31 44 36 03 74 0D')
  t.equal(show(NecLfd.powerOn(0)).slice(0, 11), '01 30 2A 30', 'id 0 is all monitors')
  t.equal(NecLfd.expectsReply(0), false)
  t.equal(necBcc(bytes('30 41 30 41 30 36 02 30 31 44 36 03'), 0, 12), 0x74)
  t.equal(NecLfd.setVolume!(1, 50).subarray(8, 16).toString('latin1'), '00620032')
  t.equal(NecLfd.setInput(1, 'hdmi1').subarray(8, 16).toString('latin1'), '00600011')
  t.equal(NecLfd.setMute(1, true).subarray(8, 16).toString('latin1'), '008D0001')
  t.throws(() => NecLfd.powerOn(101), RangeError)
})

t.test('replies swap the header', async (t) => {
  const on = encodeNecReply({ id: 1, type: 'B', message: '00C203D60001' })
  t.equal(show(on), '01 30 30 41 42 30 45 02 30 30 43 32 30 33 44 36 30 30 30 31 03 76 0D')
  t.same(NecLfd.parseReply(on), { ok: true, kind: 'power', id: 1, power: 'on', value: 'on' })
  const status = encodeNecReply({ id: 1, type: 'B', message: '0200D6000004000' + '4' })
  t.match(NecLfd.parseReply(status), { ok: true, kind: 'power', power: 'off' })
  t.match(NecLfd.parseReply(encodeNecReply({ id: 1, type: 'B', message: '0200D60000040002' })), { power: 'standby' })
  t.match(NecLfd.parseReply(encodeNecReply({ id: 2, type: 'B', message: '01C203D60001' })), {
    ok: false,
    nak: true,
    errorCode: 1,
    id: 2,
  })
  const vol = encodeNecReply({
    id: 1,
    type: 'F',
    message: encodeNecParameterReply({ result: 0, page: 0, code: 0x62, kind: 0, max: 100, current: 50 }),
  })
  t.match(NecLfd.parseReply(vol), { ok: true, kind: 'volume', volume: 50 })
  const unsupported = encodeNecReply({ id: 1, type: 'D', message: '0100600000000000' })
  t.match(NecLfd.parseReply(unsupported), { ok: false, nak: true, kind: 'input' })
})

t.test('round trips', async (t) => {
  for (const f of [NecLfd.powerOn(5), NecLfd.powerQuery(100), NecLfd.setVolume!(8, 13)]) {
    t.same(encodeNecCommand(parseNecCommand(f)), f)
  }
  const r = { id: 3, type: 'D' as const, message: '0000620000640020' }
  t.same(parseNecReply(encodeNecReply(r)), r)
  t.throws(() => parseNecReply(NecLfd.powerOn(1)), { code: 'invalid' }, 'a command is not a reply')
  t.throws(() => parseNecCommand(encodeNecReply(r)), { code: 'invalid' })
})

t.test('errors', async (t) => {
  const on = NecLfd.powerOn(1)
  t.throws(() => parseNecFrame(on.subarray(0, 5)), { code: 'truncated' })
  t.throws(() => parseNecFrame(on.subarray(0, on.length - 1)), { code: 'truncated' })
  t.throws(() => parseNecFrame(Buffer.concat([on, Buffer.from([0])])), { code: 'invalid' })
  t.throws(() => parseNecFrame(Buffer.from([0x02, ...on.subarray(1)])), { code: 'invalid' })
  const badBcc = Buffer.from(on)
  badBcc[badBcc.length - 2] = 0x00
  t.throws(() => parseNecFrame(badBcc), { code: 'checksum' })
  const noCr = Buffer.from(on)
  noCr[noCr.length - 1] = 0x0a
  t.throws(() => parseNecFrame(noCr), { code: 'invalid' })
  const badType = Buffer.from(on)
  badType[4] = 0x5a
  t.throws(() => parseNecFrame(badType), { code: 'invalid' })
})

t.test('BCC 0D: framer goes by length, not CR', async (t) => {
  // volume 13 to monitor 8: XOR of the bytes after SOH is 0D
  const cmd = NecLfd.setVolume!(8, 13)
  t.equal(show(cmd), '01 30 48 30 45 30 41 02 30 30 36 32 30 30 30 44 03 0D 0D')
  const f = createNecCommandFramer()
  t.same(f.push(cmd.subarray(0, 18)), [], 'the BCC byte 0D does not end the frame')
  t.same(f.push(cmd.subarray(18)).map(show), [show(cmd)])
  t.same(parseNecCommand(cmd), { id: 8, type: 'E', message: necParameterMessage(0, 0x62, 13) })

  const reply = encodeNecReply({
    id: 2,
    type: 'F',
    message: encodeNecParameterReply({ result: 0, page: 0, code: 0x62, kind: 0, max: 100, current: 73 }),
  })
  t.equal(reply[reply.length - 2], 0x0d)
  const rf = createNecReplyFramer()
  const out: Buffer[] = []
  for (const b of Buffer.concat([bytes('0D 0D 01 FF'), reply])) out.push(...rf.push(Uint8Array.of(b)))
  t.same(out.map(show), [show(reply)], 'garbage (including a stray SOH) skipped, split byte by byte')
  t.match(NecLfd.parseReply(out[0]!), { volume: 73, id: 2 })
})

t.test('reply framer keeps bad-BCC frames for parse, resyncs on false SOH', async (t) => {
  const reply = encodeNecReply({ id: 1, type: 'B', message: '00C203D60001' })
  const bad = Buffer.from(reply)
  bad[bad.length - 2] ^= 0xff
  const rf = createNecReplyFramer()
  const [frame] = rf.push(bad)
  t.throws(() => NecLfd.parseReply(frame!), { code: 'checksum' })
  // a plausible-looking header in garbage whose length would swallow the real reply
  const fake = Buffer.from([0x01, 0x30, 0x30, 0x41, 0x42, 0x30, 0x34])
  t.same(rf.push(Buffer.concat([fake, reply])).map(show), [show(reply)])
  t.equal(rf.pending, 0)
})
