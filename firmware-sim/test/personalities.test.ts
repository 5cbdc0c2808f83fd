import t, { type Test } from 'tap'
import { LgCommercial, NecLfd, PjLink, SamsungMdc, encodeMdcCommand, encodeNecCommand, necParameterMessage, parseMdcReply } from '@svc/shared/panels/index'
import { hexPreview } from '@svc/shared/serial/index'
import { createMockSerialPanel, ManualClock } from '../src/testing.js'
import type { SimulatedPanelOptions } from '../src/SimulatedPanel.js'

async function harness(t: Test, opts: SimulatedPanelOptions) {
  const h = await createMockSerialPanel(opts)
  t.after(() => h.close())
  return h
}

/** Sends a frame and returns the reply (or null). */
async function ask(h: Awaited<ReturnType<typeof harness>>, frame: Buffer): Promise<Buffer | null> {
  h.send(frame)
  await h.idle()
  return h.nextReply(0)
}

t.test('MDC: power, volume, mute, input and status', async (t) => {
  const h = await harness(t, { protocol: 'samsung-mdc' })
  const on = await ask(h, SamsungMdc.powerOn(1))
  t.equal(hexPreview(on!), 'AA FF 01 03 41 11 01 56')
  t.equal(h.panel.state.power, 'on')
  t.same(h.binding.lastWrite, on, 'the reply went through the mock port')
  t.match(SamsungMdc.parseReply((await ask(h, SamsungMdc.setVolume!(1, 42)))!), { ok: true, volume: 42 })
  t.match(SamsungMdc.parseReply((await ask(h, SamsungMdc.setMute(1, true)))!), { ok: true, muted: true })
  t.match(SamsungMdc.parseReply((await ask(h, SamsungMdc.setInput(1, 'displayport')))!), { input: 'displayport' })
  const status = SamsungMdc.parseReply((await ask(h, encodeMdcCommand({ cmd: 0, id: 1, data: new Uint8Array() })))!)
  t.match(status, { kind: 'status', power: 'on', volume: 42, muted: true, input: 'displayport' })
  t.match(SamsungMdc.parseReply((await ask(h, SamsungMdc.powerQuery(1)))!), { power: 'on' })
  t.same(h.panel.state, { power: 'on', input: 'displayport', volume: 42, muted: true, id: 1 })
  // out of range volume and unknown command are NAKed
  t.match(SamsungMdc.parseReply((await ask(h, encodeMdcCommand({ cmd: 0x12, id: 1, data: Uint8Array.of(101) })))!), { nak: true })
  const unknown = (await ask(h, encodeMdcCommand({ cmd: 0x77, id: 1, data: new Uint8Array() })))!
  t.same(parseMdcReply(unknown), { id: 1, ack: false, cmd: 0x77, data: Buffer.from([1]) })
})

t.test('MDC: another id is ignored, broadcast FE is obeyed, bad checksum ignored', async (t) => {
  const h = await harness(t, { protocol: 'samsung-mdc', state: { id: 3 } })
  t.equal(await ask(h, SamsungMdc.powerOn(1)), null)
  t.equal(h.panel.state.power, 'off')
  const bad = SamsungMdc.powerOn(3)
  bad[bad.length - 1] ^= 1
  t.equal(await ask(h, bad), null)
  t.equal(h.panel.state.power, 'off')
  t.match(SamsungMdc.parseReply((await ask(h, SamsungMdc.powerOn(0xfe)))!), { ok: true, id: 3 })
  t.equal(h.panel.state.power, 'on')
})

t.test('LG: ka kf ke xb, inverted mute, broadcast silent', async (t) => {
  const h = await harness(t, { protocol: 'lg' })
  const on = await ask(h, LgCommercial.powerOn(1))
  t.equal(on!.toString('latin1'), 'a 01 OK01x')
  t.equal((await ask(h, LgCommercial.powerQuery(1)))!.toString('latin1'), 'a 01 OK01x')
  t.equal((await ask(h, LgCommercial.setVolume!(1, 100)))!.toString('latin1'), 'f 01 OK64x')
  t.equal((await ask(h, LgCommercial.setMute(1, true)))!.toString('latin1'), 'e 01 OK00x')
  t.equal(h.panel.state.muted, true)
  t.equal((await ask(h, LgCommercial.setInput(1, 'hdmi2')))!.toString('latin1'), 'b 01 OK91x')
  t.equal(h.panel.state.input, 'hdmi2')
  t.equal((await ask(h, Buffer.from('kf 01 65\r')))!.toString('latin1'), 'f 01 NG01x', 'volume over 100')
  t.equal((await ask(h, Buffer.from('zz 01 01\r')))!.toString('latin1'), 'z 01 NG01x')
  t.equal(await ask(h, LgCommercial.powerOff(0)), null, 'set id 00: no reply')
  t.equal(h.panel.state.power, 'off', 'but the set obeys')
})

t.test('LG quirks: NG while playing media, ka only while on', async (t) => {
  const h = await harness(t, { protocol: 'lg', personalityOptions: { lg: { ngExceptPower: true, powerOnlyWhenOn: true } } })
  t.equal(await ask(h, LgCommercial.powerOn(1)), null, 'ka ignored while off')
  h.panel.model.setPower('on')
  t.equal((await ask(h, LgCommercial.setVolume!(1, 5)))!.toString('latin1'), 'f 01 NG01x')
  t.equal((await ask(h, LgCommercial.powerOff(1)))!.toString('latin1'), 'a 01 OK00x')
})

t.test('NEC: power set/status and parameters, BCC 0D frames', async (t) => {
  const h = await harness(t, { protocol: 'nec', state: { id: 8 } })
  t.match(NecLfd.parseReply((await ask(h, NecLfd.powerQuery(8)))!), { ok: true, power: 'off', id: 8 })
  const on = (await ask(h, NecLfd.powerOn(8)))!
  t.match(NecLfd.parseReply(on), { ok: true, kind: 'power', power: 'on' })
  t.equal(on.subarray(2, 4).toString('latin1'), '0H', 'reply header swapped to 0 0 <monitor>')
  t.match(NecLfd.parseReply((await ask(h, NecLfd.powerQuery(8)))!), { power: 'on' })
  // this command's BCC is 0D: the framer must not cut it at the BCC
  const vol13 = NecLfd.setVolume!(8, 13)
  t.equal(vol13[vol13.length - 2], 0x0d)
  t.match(NecLfd.parseReply((await ask(h, vol13))!), { ok: true, kind: 'volume', volume: 13 })
  t.equal(h.panel.state.volume, 13)
  const get = encodeNecCommand({ id: 8, type: 'C', message: necParameterMessage(0, 0x62) })
  t.match(NecLfd.parseReply((await ask(h, get))!), { kind: 'volume', volume: 13 })
  t.match(NecLfd.parseReply((await ask(h, NecLfd.setMute(8, true)))!), { muted: true })
  t.match(NecLfd.parseReply((await ask(h, NecLfd.setInput(8, 'hdmi2')))!), { input: 'hdmi2' })
  const unsupported = encodeNecCommand({ id: 8, type: 'C', message: necParameterMessage(0x02, 0x10) })
  t.match(NecLfd.parseReply((await ask(h, unsupported))!), { ok: false, nak: true })
  t.equal(await ask(h, NecLfd.powerOff(1)), null, 'other monitor')
})

t.test('PJLink: greeting, POWR with warm-up and cool-down on a manual clock', async (t) => {
  const clock = new ManualClock()
  const h = await harness(t, { protocol: 'pjlink', clock, personalityOptions: { pjlink: { warmupMs: 5000, cooldownMs: 3000 } } })
  const greeting = await h.nextReply(500)
  t.equal(greeting?.toString('latin1'), 'PJLINK 0\r')
  t.equal((await ask(h, PjLink.powerOn(1)))!.toString('latin1'), '%1POWR=OK\r')
  t.match(PjLink.parseReply((await ask(h, PjLink.powerQuery(1)))!), { power: 'warming' })
  t.equal((await ask(h, PjLink.powerOff(1)))!.toString('latin1'), '%1POWR=ERR3\r', 'cannot switch off while warming')
  await clock.advanceSettling(5000)
  t.match(PjLink.parseReply((await ask(h, PjLink.powerQuery(1)))!), { power: 'on' })
  t.equal((await ask(h, PjLink.powerOff(1)))!.toString('latin1'), '%1POWR=OK\r')
  t.equal(h.panel.state.power, 'cooling')
  await clock.advanceSettling(3000)
  t.equal(h.panel.state.power, 'standby')
  t.equal((await ask(h, PjLink.setInput(1, 'hdmi2')))!.toString('latin1'), '%1INPT=OK\r')
  t.equal((await ask(h, Buffer.from('%1INPT ?\r')))!.toString('latin1'), '%1INPT=32\r')
  t.equal((await ask(h, PjLink.setMute(1, true)))!.toString('latin1'), '%1AVMT=OK\r')
  t.equal(h.panel.state.muted, true)
  t.equal((await ask(h, Buffer.from('%1XXXX ?\r')))!.toString('latin1'), '%1XXXX=ERR1\r')
  t.equal((await ask(h, Buffer.from('%1POWR 7\r')))!.toString('latin1'), '%1POWR=ERR2\r')
})

t.test('raw: echo, or a configured line, after silence', async (t) => {
  const clock = new ManualClock()
  const echo = await harness(t, { protocol: 'raw', clock })
  echo.send('PWR ON\r')
  await echo.idle()
  t.equal(echo.takeWritten().length, 0, 'nothing before the line goes quiet')
  await clock.advanceSettling(30)
  await echo.idle()
  t.equal(echo.takeWritten().toString('latin1'), 'PWR ON\r')

  const fixed = await harness(t, { protocol: 'raw', clock, personalityOptions: { raw: { reply: 'OK\r\n', silenceMs: 10 } } })
  fixed.send('A')
  await fixed.idle()
  await clock.advanceSettling(5)
  fixed.send('B')
  await fixed.idle()
  await clock.advanceSettling(5)
  t.equal(fixed.takeWritten().length, 0, 'silence timer restarts on each byte')
  await clock.advanceSettling(5)
  await fixed.idle()
  t.equal(fixed.takeWritten().toString('latin1'), 'OK\r\n')
})
