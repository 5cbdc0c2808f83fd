// Every preset command (GET /v1/serial-presets' source) sent to a simulated panel of its
// protocol over a serial port: the panel accepts it and does it, and the reply parses with
// the codec the agent uses. Set id 3, so the id byte is exercised too.
import t from 'tap'
import { CecReplyFramer, isPjLinkGreeting, panelPreset, panelProtocols, PANEL_PROTOCOL_NAMES, splitCecCommand, type PanelReply } from '@svc/shared/panels/index'
import { encodeCommand } from '@svc/shared/serial/index'
import { createMockSerialPanel } from '../src/testing.js'

for (const protocol of PANEL_PROTOCOL_NAMES.filter((p) => p !== 'cec')) {
  t.test(`${protocol}: every preset command is accepted and done by the simulated panel`, async (t) => {
    const setId = 3
    const sim = await createMockSerialPanel({ protocol, state: { id: setId, power: 'off', input: 'hdmi1', muted: false } })
    t.teardown(() => sim.close())
    const codec = panelProtocols[protocol]
    if (protocol === 'pjlink') {
      const greeting = await sim.nextReply()
      t.ok(greeting && isPjLinkGreeting(greeting), 'PJLink greets first')
    }
    for (const c of panelPreset(protocol, setId).commands) {
      sim.send(encodeCommand(c))
      const frame = await sim.nextReply(2000)
      t.ok(frame, `${c.key}: a reply`)
      if (!frame) continue
      const reply = codec.parseReply(frame)
      t.equal(reply.ok, true, `${c.key}: accepted`)
      if (c.key === 'power.on') t.equal(sim.panel.state.power, 'on')
      if (c.key === 'power.status') t.ok(reply.power && reply.power !== 'on', `status reads power (after power.off: ${reply.power})`)
      if (c.key.startsWith('input.') && c.key !== 'input.status') t.equal(sim.panel.state.input, c.key.slice(6), `${c.key} selected`)
      if (c.key === 'input.status') t.equal(reply.input, sim.panel.state.input, 'status reads the input')
      if (c.key === 'volume.mute') t.equal(sim.panel.state.muted, true)
      if (c.key === 'volume.unmute') t.equal(sim.panel.state.muted, false)
      if (c.key === 'power.off') t.not(sim.panel.state.power, 'on')
    }
  })
}

// CEC: the agent writes one transmission at a time and reads each answer with the framer
// made for it; set id 3 = the player sits on the TV's HDMI 3.
t.test('cec: every preset command is accepted and done by the simulated adapter and TV', async (t) => {
  const setId = 3
  const sim = await createMockSerialPanel({ protocol: 'cec', state: { id: setId, power: 'off', input: 'hdmi1', muted: false } })
  t.teardown(() => sim.close())
  const exchange = async (bytes: Buffer): Promise<PanelReply | null> => {
    let last: PanelReply | null = null
    for (const piece of splitCecCommand(bytes)) {
      sim.send(piece)
      await sim.idle()
      const frames = new CecReplyFramer(piece).push(sim.takeWritten())
      if (frames.length !== 1) return null
      last = panelProtocols.cec.parseReply(frames[0]!)
      if (!last.ok) return last
    }
    return last
  }
  for (const c of panelPreset('cec', setId).commands) {
    const reply = await exchange(encodeCommand(c))
    if (c.key === 'input.status') {
      t.equal(reply, null, 'input.status while the player shows: nobody answers (the player would have to)')
      t.equal(sim.panel.state.input, 'hdmi3')
      continue
    }
    t.equal(reply?.ok, true, `${c.key}: accepted`)
    if (c.key === 'power.on') t.same([sim.panel.state.power, sim.panel.state.input], ['on', 'hdmi3'], 'Image View On, then Active Source 3.0.0.0')
    if (c.key === 'power.status') t.equal(reply?.power, 'standby', 'status reads power (after power.off)')
    if (c.key === 'power.off') t.equal(sim.panel.state.power, 'standby')
    if (/^input\.hdmi/.test(c.key)) t.equal(sim.panel.state.input, c.key.slice(6), `${c.key} selected`)
    if (c.key === 'input.player') t.equal(sim.panel.state.input, 'hdmi3', "the player's own input")
    if (c.key === 'volume.mute') t.equal(sim.panel.state.muted, true)
    if (c.key === 'volume.unmute') t.equal(sim.panel.state.muted, false)
  }
  sim.panel.model.setInput('hdmi2')
  t.match(await exchange(panelProtocols.cec.inputQuery!(setId)), { ok: true, kind: 'input', input: 'hdmi2' }, 'another source answers for its input')
})

t.test('cec faults: a TV without CEC acknowledges nothing; a TV that ignores standby stays on', async (t) => {
  const sim = await createMockSerialPanel({ protocol: 'cec', state: { id: 1, power: 'on', input: 'hdmi1' }, faults: { noCec: true } })
  t.teardown(() => sim.close())
  const reply = async (bytes: Buffer) => {
    sim.send(bytes)
    await sim.idle()
    const frames = new CecReplyFramer(bytes).push(sim.takeWritten())
    return frames.length === 1 ? panelProtocols.cec.parseReply(frames[0]!) : null
  }
  t.same(
    await reply(panelProtocols.cec.powerQuery(1)),
    { ok: false, nak: true, kind: 'other', errorCode: 'no-ack' },
    'Give Device Power Status: nobody acknowledged',
  )
  t.same(await reply(panelProtocols.cec.powerOff(1)), { ok: false, nak: true, kind: 'other', errorCode: 'no-ack' })
  t.equal(sim.panel.state.power, 'on', 'nothing happened')

  sim.panel.clearFaults()
  sim.panel.setFaults({ ignoreStandby: true })
  t.match(await reply(panelProtocols.cec.powerOff(1)), { ok: true }, 'Standby acknowledged')
  t.equal(sim.panel.state.power, 'on', '… and ignored')
  t.match(await reply(panelProtocols.cec.powerQuery(1)), { ok: true, power: 'on' })
  sim.panel.model.setPower('standby')
  for (const piece of splitCecCommand(panelProtocols.cec.powerOn(1))) t.match(await reply(piece), { ok: true })
  t.equal(sim.panel.state.power, 'on', 'power on still works')

  sim.panel.clearFaults()
  sim.panel.setFaults({ badChecksum: true })
  sim.send(panelProtocols.cec.powerQuery(1))
  await sim.idle()
  const frames = new CecReplyFramer(panelProtocols.cec.powerQuery(1)).push(sim.takeWritten())
  t.throws(() => frames.map((f) => panelProtocols.cec.parseReply(f)), { name: 'PanelProtocolError', code: 'escape' }, 'a broken escape is the corrupt reply')
})
