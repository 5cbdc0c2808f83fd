import t from 'tap'
import {
  PjLink,
  encodePjLinkCommand,
  encodePjLinkReply,
  encodePjLinkGreeting,
  parsePjLinkCommand,
  parsePjLinkReply,
  parsePjLinkGreeting,
  createPjLinkReplyFramer,
  createPjLinkCommandFramer,
} from '../../src/panels/index.js'
const show = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).toUpperCase().padStart(2, '0')).join(' ')

const s = (b: Buffer) => b.toString('latin1')

t.test('commands', async (t) => {
  t.equal(s(PjLink.powerOn(1)), '%1POWR 1\r')
  t.equal(show(PjLink.powerOn(1)), '25 31 50 4F 57 52 20 31 0D')
  t.equal(s(PjLink.powerOff(1)), '%1POWR 0\r')
  t.equal(s(PjLink.powerQuery(1)), '%1POWR ?\r')
  t.equal(s(PjLink.setInput(1, 'hdmi1')), '%1INPT 31\r')
  t.equal(s(PjLink.setInput(1, 11)), '%1INPT 11\r')
  t.equal(s(PjLink.setMute(1, true)), '%1AVMT 21\r')
  t.equal(PjLink.setVolume, undefined, 'no absolute volume in PJLink')
  t.throws(() => encodePjLinkCommand({ cls: '1', cmd: 'powr', param: '1' }), RangeError)
})

t.test('replies', async (t) => {
  t.same(PjLink.parseReply(Buffer.from('%1POWR=OK\r')), { ok: true, kind: 'power' })
  t.same(PjLink.parseReply(Buffer.from('%1POWR=ERR3\r')), { ok: false, nak: true, kind: 'power', errorCode: 'ERR3' })
  const states = { '0': 'standby', '1': 'on', '2': 'cooling', '3': 'warming' } as const
  for (const [code, power] of Object.entries(states)) {
    t.same(PjLink.parseReply(encodePjLinkReply({ cls: '1', cmd: 'POWR', value: code })), { ok: true, kind: 'power', power, value: power })
  }
  t.match(PjLink.parseReply(Buffer.from('%1INPT=31\r')), { kind: 'input', input: 'hdmi1' })
  t.match(PjLink.parseReply(Buffer.from('%1AVMT=31\r')), { kind: 'mute', muted: true })
  t.match(PjLink.parseReply(Buffer.from('%1AVMT=20\r')), { kind: 'mute', muted: false })
  t.same(PjLink.parseReply(Buffer.from('PJLINK 0\r')), { ok: true, kind: 'greeting', value: 'open' })
  t.match(PjLink.parseReply(Buffer.from('PJLINK ERRA\r')), { ok: false, nak: true, errorCode: 'ERRA' })
  t.throws(() => PjLink.parseReply(Buffer.from('%1POWR=7\r')), { code: 'invalid' })
  t.throws(() => PjLink.parseReply(Buffer.from('%1POWR=OK')), { code: 'truncated' })
  t.throws(() => PjLink.parseReply(Buffer.from('POWR=OK\r')), { code: 'invalid' })
})

t.test('round trips', async (t) => {
  const c = { cls: '1' as const, cmd: 'INPT', param: '32' }
  t.same(parsePjLinkCommand(encodePjLinkCommand(c)), c)
  const r = { cls: '2' as const, cmd: 'SVOL', value: 'OK' }
  t.same(parsePjLinkReply(encodePjLinkReply(r)), r)
  t.same(parsePjLinkGreeting(encodePjLinkGreeting({ auth: true, random: '498e4a67' })), { auth: true, random: '498e4a67' })
  t.same(parsePjLinkGreeting(encodePjLinkGreeting({ auth: false })), { auth: false })
  t.throws(() => parsePjLinkCommand(Buffer.from('%1POWR\r')), { code: 'invalid' })
})

t.test('framers', async (t) => {
  const f = createPjLinkReplyFramer()
  t.same(f.push(Buffer.from('\x00garbage\rPJLI')), [])
  t.same(f.push(Buffer.from('NK 0\r%1POWR=')).map(s), ['PJLINK 0\r'])
  t.same(f.push(Buffer.from('OK\r')).map(s), ['%1POWR=OK\r'])
  t.equal(f.pending, 0)
  const c = createPjLinkCommandFramer()
  t.same(c.push(Buffer.from('%1POWR 1\r%1POWR ?')).map(s), ['%1POWR 1\r'])
  t.same(c.push(Buffer.from('\r')).map(s), ['%1POWR ?\r'])
})
