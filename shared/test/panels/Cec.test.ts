import t from 'tap'
import {
  Cec,
  CecOpcode,
  CecReplyFramer,
  P8Code,
  type P8MessageFramer,
  encodeCecMessage,
  encodeP8Message,
  encodeP8Received,
  encodeP8Setup,
  encodeP8Transmit,
  panelPreset,
  parseCecMessage,
  parseCecReply,
  parseP8Message,
  splitCecCommand,
  type CecMessage,
} from '../../src/panels/index.js'

const show = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).toUpperCase().padStart(2, '0')).join(' ')
const m = (initiator: number, destination: number, opcode: number | undefined, ...operands: number[]): CecMessage => ({
  initiator,
  destination,
  ...(opcode === undefined ? {} : { opcode }),
  operands: Uint8Array.from(operands),
})

// Frames worked out from the CEC 1.4 opcode tables: header = initiator << 4 | destination.
const VECTORS: [string, CecMessage, string][] = [
  ['Image View On, playback 1 → TV', m(4, 0, 0x04), '40 04'],
  ['Text View On', m(4, 0, 0x0d), '40 0D'],
  ['Active Source 1.0.0.0, broadcast', m(4, 15, 0x82, 0x10, 0x00), '4F 82 10 00'],
  ['Standby to the TV', m(4, 0, 0x36), '40 36'],
  ['Standby to all', m(4, 15, 0x36), '4F 36'],
  ['Give Device Power Status', m(4, 0, 0x8f), '40 8F'],
  ['Report Power Status: on', m(0, 4, 0x90, 0x00), '04 90 00'],
  ['Report Power Status: standby', m(0, 4, 0x90, 0x01), '04 90 01'],
  ['Report Power Status: to on', m(0, 4, 0x90, 0x02), '04 90 02'],
  ['Set Stream Path 2.0.0.0', m(4, 15, 0x86, 0x20, 0x00), '4F 86 20 00'],
  ['Set Stream Path 1.2.0.0', m(4, 15, 0x86, 0x12, 0x00), '4F 86 12 00'],
  ['Request Active Source', m(4, 15, 0x85), '4F 85'],
  ['User Control Pressed: Mute Function', m(4, 0, 0x44, 0x65), '40 44 65'],
  ['User Control Pressed: Mute', m(4, 0, 0x44, 0x43), '40 44 43'],
  ['User Control Released', m(4, 0, 0x45), '40 45'],
  ['Feature Abort of Give Device Power Status: refused', m(0, 4, 0x00, 0x8f, 0x04), '04 00 8F 04'],
  ['Polling message (header only)', m(4, 0, undefined), '40'],
  ['Routing Change 1.0.0.0 → 2.0.0.0', m(0, 15, 0x80, 0x10, 0x00, 0x20, 0x00), '0F 80 10 00 20 00'],
  ['Report Physical Address 3.0.0.0, playback', m(8, 15, 0x84, 0x30, 0x00, 0x04), '8F 84 30 00 04'],
  ['unknown opcode passes through', m(4, 0, 0xa0, 1, 2, 3), '40 A0 01 02 03'],
]

t.test('CEC messages: encode, parse, round trip', async (t) => {
  for (const [name, message, bytes] of VECTORS) {
    const encoded = encodeCecMessage(message)
    t.equal(show(encoded), bytes, name)
    t.same(parseCecMessage(encoded), { ...message, operands: Buffer.from(message.operands) }, `${name}: parsed`)
    t.same(encodeCecMessage(parseCecMessage(Buffer.from(bytes.replace(/ /g, ''), 'hex'))), encoded, `${name}: round trip`)
  }
})

t.test('CEC messages: distinct errors', async (t) => {
  const cases: [string, string, string][] = [
    ['', 'truncated', 'no header'],
    ['4090', 'truncated', 'Report Power Status without its status'],
    ['4F82', 'truncated', 'Active Source without an address'],
    ['400401', 'invalid', 'Image View On with an operand'],
    [`40${'01'.repeat(16)}`, 'invalid', 'more than 16 bytes'],
    ['4F04', 'addressing', 'Image View On broadcast'],
    ['4F8F', 'addressing', 'Give Device Power Status broadcast'],
    ['40821000', 'addressing', 'Active Source sent to the TV only'],
    ['408600', 'truncated', 'Set Stream Path with one byte'],
    ['049007', 'operand', 'power status 7'],
    ['4F861020', 'operand', '1.0.2.0 is not a physical address'],
    ['4F86FFFF', 'operand', 'F.F.F.F'],
  ]
  for (const [hex, code, why] of cases) {
    t.throws(() => parseCecMessage(Buffer.from(hex, 'hex')), { name: 'PanelProtocolError', code }, `${why}: ${code}`)
  }
  t.throws(() => encodeCecMessage(m(16, 0, 0x04)), RangeError, 'initiator above 15')
  t.throws(() => encodeCecMessage(m(4, 15, 0x04)), RangeError, 'encode refuses what parse refuses')
  t.throws(() => encodeCecMessage(m(4, 0, 0x90, 9)), RangeError)
})

t.test('Pulse-Eight messages: framing, escapes, flags', async (t) => {
  // the kernel driver: a byte from FD up goes out as FD, byte - 3
  t.equal(show(encodeP8Message({ code: P8Code.transmit, data: Uint8Array.of(0x40) })), 'FF 0B 40 FE')
  t.equal(show(encodeP8Message({ code: P8Code.transmitEom, data: Uint8Array.of(0xff) })), 'FF 0C FD FC FE', 'FF is escaped')
  t.equal(show(encodeP8Message({ code: P8Code.transmit, data: Uint8Array.of(0xfd, 0xfe) })), 'FF 0B FD FA FD FB FE')
  t.equal(show(encodeP8Message({ code: P8Code.frameData, eom: true, ack: true, data: Uint8Array.of(0x90) })), 'FF C6 90 FE', 'EOM and ACK bits')
  t.equal(show(encodeP8Message({ code: P8Code.commandAccepted, data: Uint8Array.of(0x0b) })), 'FF 08 0B FE')
  for (const msg of [
    { code: P8Code.transmitSucceeded, data: new Uint8Array() },
    { code: P8Code.frameStart, ack: true, data: Uint8Array.of(0x04) },
    { code: P8Code.frameData, eom: true, data: Uint8Array.of(0xfe) },
    { code: P8Code.setAckMask, data: Uint8Array.of(0x00, 0x10) },
  ]) {
    t.same(parseP8Message(encodeP8Message(msg)), { ...msg, data: Buffer.from(msg.data) }, `round trip ${msg.code}`)
  }
  const errors: [string, string][] = [
    ['', 'truncated'],
    ['0b40fe', 'invalid'],
    ['ff0b40', 'truncated'],
    ['fffe', 'invalid'],
    ['ff0bfdfe', 'escape'],
    ['ff0bfdfdfe', 'escape'],
    ['ff0bfd', 'truncated'],
    ['ff0bff40fe', 'invalid'],
    ['ff0b40fe00', 'invalid'],
  ]
  for (const [hex, code] of errors) {
    t.throws(() => parseP8Message(Buffer.from(hex, 'hex')), { name: 'PanelProtocolError', code }, `${hex || '(empty)'}: ${code}`)
  }
})

t.test('Pulse-Eight transmissions: as libcec writes them', async (t) => {
  t.equal(show(encodeP8Transmit(m(4, 0, 0x04))), 'FF 0E 00 FE FF 0B 40 FE FF 0C 04 FE', 'Image View On: polarity 0, header, opcode with EOM')
  t.equal(show(encodeP8Transmit(m(4, 15, 0x82, 0x10, 0x00))), 'FF 0E 01 FE FF 0B 4F FE FF 0B 82 FE FF 0B 10 FE FF 0C 00 FE', 'broadcast: polarity 1')
  t.equal(show(encodeP8Received(m(0, 4, 0x90, 0x01))), 'FF 45 04 FE FF 46 90 FE FF C6 01 FE')
})

t.test("Pulse-Eight set-up on open: as the kernel's pulse8-cec driver writes it", async (t) => {
  t.same(encodeP8Setup().map(show), ['FF 18 01 FE', 'FF 0A 00 10 FE'], 'SET_CONTROLLED 1; SET_ACK_MASK with bit 4 (Playback Device 1)')
  t.same(encodeP8Setup(14).map(show), ['FF 18 01 FE', 'FF 0A 40 00 FE'], 'address 14: the high byte')
  t.same(Cec.openCommands?.().map(show), encodeP8Setup().map(show), 'what the protocol sends on each open')
  for (const bad of [-1, 15, 1.5]) t.throws(() => encodeP8Setup(bad), RangeError, `logical address ${bad}`)
  // each is one exchange: the reply framer ends at the adapter's answer
  const framer = new CecReplyFramer(encodeP8Setup()[0])
  t.same(framer.push(Buffer.from('ff0818fe', 'hex')).map(show), ['FF 08 18 FE'], 'COMMAND_ACCEPTED ends it')
  t.same(parseCecReply(Buffer.from('ff0918fe', 'hex')), { ok: false, nak: true, kind: 'other', errorCode: 'rejected' }, 'COMMAND_REJECTED')
})

t.test('the panel commands', async (t) => {
  t.equal(show(Cec.powerQuery(1)), 'FF 0E 00 FE FF 0B 40 FE FF 0C 8F FE')
  t.equal(show(Cec.powerOff(1)), 'FF 0E 00 FE FF 0B 40 FE FF 0C 36 FE')
  const on = splitCecCommand(Cec.powerOn(2))
  t.equal(on.length, 2, 'power on is two transmissions: Image View On, then Active Source')
  t.equal(show(on[0]!), 'FF 0E 00 FE FF 0B 40 FE FF 0C 04 FE')
  t.equal(show(on[1]!), 'FF 0E 01 FE FF 0B 4F FE FF 0B 82 FE FF 0B 20 FE FF 0C 00 FE', 'Active Source 2.0.0.0: the player sits on HDMI 2')
  t.equal(show(Cec.setInput(1, 'hdmi3')), 'FF 0E 01 FE FF 0B 4F FE FF 0B 86 FE FF 0B 30 FE FF 0C 00 FE')
  t.equal(splitCecCommand(Cec.setMute(1, true)).length, 2, 'mute: pressed, then released')
  t.throws(() => Cec.setInput(1, 'displayport'), RangeError)
  t.throws(() => Cec.powerQuery(0), RangeError, 'set id 0 would be the TV itself')
  t.throws(() => Cec.powerQuery(16), RangeError)
  const preset = panelPreset('cec', 1)
  t.same(
    preset.commands.map((c) => c.key),
    [
      'power.on',
      'power.off',
      'power.status',
      'input.hdmi1',
      'input.hdmi2',
      'input.hdmi3',
      'input.hdmi4',
      'input.player',
      'input.status',
      'volume.mute',
      'volume.unmute',
    ],
  )
  t.ok(preset.commands.every((c) => c.encoding === 'hex'))
})

const feed = (framer: CecReplyFramer | P8MessageFramer, ...parts: Buffer[]): Buffer[] => framer.push(Buffer.concat(parts))
const accepted = encodeP8Message({ code: P8Code.commandAccepted, data: Uint8Array.of(P8Code.transmit) })
const result = (code: number) => encodeP8Message({ code, data: new Uint8Array() })

t.test('replies: the framer waits for what the command needs', async (t) => {
  const query = Cec.powerQuery(1)
  const f = new CecReplyFramer(query)
  t.same(feed(f, accepted, accepted, accepted, result(P8Code.transmitSucceeded)), [], 'a query waits for its answer')
  t.same(feed(f, encodeP8Received(m(0, 15, 0x82, 0x10, 0x00))), [], 'an unrelated broadcast is no answer')
  const frames = feed(f, encodeP8Received(m(0, 4, 0x90, 0x00)))
  t.equal(frames.length, 1)
  t.same(parseCecReply(frames[0]!), { ok: true, kind: 'power', id: 0, power: 'on', value: 'on' })

  const standby = new CecReplyFramer(Cec.powerOff(1))
  const done = feed(standby, accepted, accepted, accepted, result(P8Code.transmitSucceeded))
  t.equal(done.length, 1, 'a command without an answer ends with its transmit result')
  t.same(parseCecReply(done[0]!), { ok: true, kind: 'other' })

  const nobody = new CecReplyFramer(query)
  const nak = feed(nobody, accepted, result(P8Code.transmitFailedAck))
  t.same(parseCecReply(nak[0]!), { ok: false, nak: true, kind: 'other', errorCode: 'no-ack' }, 'nobody acknowledged: a TV without CEC')

  const aborted = new CecReplyFramer(query)
  const ab = feed(aborted, result(P8Code.transmitSucceeded), encodeP8Received(m(0, 4, CecOpcode.featureAbort, 0x8f, 0x04)))
  t.same(parseCecReply(ab[0]!), { ok: false, nak: true, kind: 'other', id: 0, errorCode: 'feature-abort:4' })

  const input = new CecReplyFramer(Cec.inputQuery!(1))
  const i = feed(input, result(P8Code.transmitSucceeded), encodeP8Received(m(8, 15, 0x82, 0x30, 0x00)))
  t.same(parseCecReply(i[0]!), { ok: true, kind: 'input', id: 8, input: 'hdmi3', value: 'hdmi3' })

  const split = new CecReplyFramer(query)
  const bytes = Buffer.concat([result(P8Code.transmitSucceeded), encodeP8Received(m(0, 4, 0x90, 0x01))])
  let got: Buffer[] = []
  for (const b of bytes) got = got.concat(split.push(Uint8Array.of(b)))
  t.same(parseCecReply(got[0]!), { ok: true, kind: 'power', id: 0, power: 'standby', value: 'standby' }, 'byte by byte')

  t.throws(() => parseCecReply(accepted.subarray(0, 3)), { name: 'PanelProtocolError', code: 'truncated' })
})
