// Every preset command (GET /v1/serial-presets' source) sent to a simulated panel of its
// protocol over a serial port: the panel accepts it and does it, and the reply parses with
// the codec the agent uses. Set id 3, so the id byte is exercised too.
import t from 'tap'
import { isPjLinkGreeting, panelPreset, panelProtocols, PANEL_PROTOCOL_NAMES } from '@svc/shared/panels/index'
import { encodeCommand } from '@svc/shared/serial/index'
import { createMockSerialPanel } from '../src/testing.js'

for (const protocol of PANEL_PROTOCOL_NAMES) {
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
