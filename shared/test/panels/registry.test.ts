import t from 'tap'
import {
  panelProtocols,
  PANEL_PROTOCOL_NAMES,
  isPanelProtocolName,
  PanelProtocolError,
  isPanelProtocolError,
  RawReplyCollector,
} from '../../src/panels/index.js'

t.test('registry holds every protocol under its own name', async (t) => {
  t.same(Object.keys(panelProtocols).sort(), [...PANEL_PROTOCOL_NAMES].sort())
  for (const name of PANEL_PROTOCOL_NAMES) {
    const p = panelProtocols[name]
    t.equal(p.name, name)
    // every power frame a host sends is one frame for the command framer
    // (CEC: every transmission of it, as the agent writes them one after another)
    for (const command of [p.powerOn(1), p.powerOff(1), p.powerQuery(1), p.setMute(1, true), p.setInput(1, 'hdmi2')])
      for (const frame of p.splitCommand?.(command) ?? [command]) {
        const frames = p.createCommandFramer().push(frame)
        t.same(frames, [frame], `${name} command framer finds ${frame.toString('hex')}`)
      }
  }
  t.ok(isPanelProtocolName('lg'))
  t.notOk(isPanelProtocolName('raw'))
  t.notOk(isPanelProtocolName('toString'))
})

t.test('error guard', async (t) => {
  const e = new PanelProtocolError('checksum', 'x', Uint8Array.of(1))
  t.ok(isPanelProtocolError(e))
  t.ok(isPanelProtocolError(e, 'checksum'))
  t.notOk(isPanelProtocolError(e, 'invalid'))
  t.notOk(isPanelProtocolError(new Error('checksum')))
  t.same(e.frame, Buffer.from([1]))
})

t.test('raw reply collector closes on silence', async (t) => {
  const c = new RawReplyCollector({ kind: 'raw', silenceMs: 50, maxBytes: 8 })
  t.equal(c.deadline(), null)
  t.equal(c.push(Buffer.from('OK'), 1000), null)
  t.equal(c.poll(1030), null)
  t.equal(c.push(Buffer.from('\r\n'), 1040), null)
  t.equal(c.deadline(), 1090)
  t.equal(c.poll(1089), null)
  t.same(c.poll(1090), Buffer.from('OK\r\n'))
  t.equal(c.pending, 0)
  t.same(c.push(Buffer.from('123456789'), 2000), Buffer.from('123456789'), 'cut at maxBytes')
})
