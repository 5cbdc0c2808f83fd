import t, { type Test } from 'tap'
import { SamsungMdc, LgCommercial, isPanelProtocolError, createMdcReplyFramer } from '@svc/shared/panels/index'
import { hexPreview } from '@svc/shared/serial/index'
import { createMockSerialPanel, ManualClock, settle } from '../src/testing.js'
import { parseFault, DEFAULT_GARBAGE } from '../src/faults.js'
import { formatTrace, type TraceEntry } from '../src/trace.js'
import type { SimulatedPanelOptions } from '../src/SimulatedPanel.js'

async function harness(t: Test, opts: Partial<SimulatedPanelOptions> = {}) {
  const clock = new ManualClock()
  const h = await createMockSerialPanel({ protocol: 'samsung-mdc', clock, ...opts })
  t.after(() => h.close())
  return { ...h, clock }
}

const ACK_ON = 'AA FF 01 03 41 11 01 56'

t.test('parseFault', async (t) => {
  t.same(parseFault('no-reply'), { noReply: true })
  t.same(parseFault('nak'), { nak: true })
  t.same(parseFault('delay:250'), { delayMs: 250 })
  t.same(parseFault('split'), { split: { chunkSize: 2, gapMs: 20 } })
  t.same(parseFault('split:3:7'), { split: { chunkSize: 3, gapMs: 7 } })
  t.same(parseFault('garbage'), { garbage: DEFAULT_GARBAGE })
  t.same(parseFault('garbage:0102'), { garbage: Buffer.from([1, 2]) })
  t.same(parseFault('bad-checksum'), { badChecksum: true })
  t.same(parseFault('ignore-power'), { ignorePower: true })
  t.throws(() => parseFault('delay:x'), TypeError)
  t.throws(() => parseFault('delay'), TypeError)
  t.throws(() => parseFault('garbage:zz'), TypeError)
  t.throws(() => parseFault('melt'), /unknown fault "melt"/)
})

t.test('no-reply: silent and nothing changes', async (t) => {
  const h = await harness(t, { faults: { noReply: true } })
  h.send(SamsungMdc.powerOn(1))
  await h.idle()
  t.equal(h.takeWritten().length, 0)
  t.equal(h.panel.state.power, 'off')
  // switched off at runtime
  h.panel.setFaults({ noReply: false })
  h.send(SamsungMdc.powerOn(1))
  await h.idle()
  t.equal(hexPreview(h.takeWritten()), ACK_ON)
})

t.test('nak: protocol rejection, no state change', async (t) => {
  const h = await harness(t)
  h.panel.setFaults({ nak: true })
  h.send(SamsungMdc.powerOn(1))
  await h.idle()
  t.match(SamsungMdc.parseReply(h.takeWritten()), { ok: false, nak: true, errorCode: 1 })
  t.equal(h.panel.state.power, 'off')
  const lg = await harness(t, { protocol: 'lg', faults: { nak: true } })
  lg.send(LgCommercial.powerOn(1))
  await lg.idle()
  t.equal(lg.takeWritten().toString('latin1'), 'a 01 NG01x')
})

t.test('ignore-power: power commands are acknowledged, the panel stays as it is; other commands work', async (t) => {
  const h = await harness(t)
  h.panel.setFaults({ ignorePower: true })
  h.send(SamsungMdc.powerOn(1))
  await h.idle()
  t.match(SamsungMdc.parseReply(h.takeWritten()), { ok: true }, 'acknowledged (MDC echoes the real power in its ACK)')
  t.equal(h.panel.state.power, 'off', 'but still off')
  h.send(SamsungMdc.setInput(1, 'hdmi2'))
  await h.idle()
  h.takeWritten()
  t.equal(h.panel.state.input, 'hdmi2', 'an input command still works')
  h.panel.clearFaults()
  h.send(SamsungMdc.powerOn(1))
  await h.idle()
  t.equal(h.panel.state.power, 'on', 'obeys again once cleared')
})

t.test('delay: the reply waits for the clock', async (t) => {
  const h = await harness(t, { faults: { delayMs: 500 } })
  h.send(SamsungMdc.powerOn(1))
  await h.clock.advanceSettling(499)
  t.equal(h.takeWritten().length, 0, 'nothing at 499 ms')
  t.equal(h.panel.state.power, 'on', 'the panel acted at once; only the answer is late')
  await h.clock.advanceSettling(1)
  await h.idle()
  t.equal(hexPreview(h.takeWritten()), ACK_ON)
})

t.test('split: chunks with gaps, reassembled by the framer', async (t) => {
  const h = await harness(t, { faults: { split: { chunkSize: 3, gapMs: 10 } } })
  const tx: Buffer[] = []
  h.panel.on('trace', (e) => e.direction === 'tx' && tx.push(e.bytes))
  h.send(SamsungMdc.powerOn(1))
  await settle(5) // not idle(): the answer is parked on the manual clock
  t.equal(hexPreview(h.takeWritten()), 'AA FF 01', 'first chunk only')
  await h.clock.advanceSettling(10)
  t.equal(hexPreview(h.takeWritten()), '03 41 11')
  await h.clock.advanceSettling(10)
  await h.idle()
  t.equal(hexPreview(h.takeWritten()), '01 56')
  t.same(tx.map(hexPreview), ['AA FF 01', '03 41 11', '01 56'])
})

t.test('garbage: noise before the reply, the framer skips it', async (t) => {
  const h = await harness(t, { faults: { garbage: DEFAULT_GARBAGE } })
  h.send(SamsungMdc.powerOn(1))
  await h.idle()
  const wire = h.takeWritten()
  t.equal(hexPreview(wire), `00 FF 7F 13 ${ACK_ON}`)
  t.same(createMdcReplyFramer().push(wire).map(hexPreview), [ACK_ON])
})

t.test('bad-checksum: the host parser reports checksum', async (t) => {
  const h = await harness(t, { faults: { badChecksum: true } })
  h.send(SamsungMdc.powerOn(1))
  await h.idle()
  const reply = await h.nextReply(0)
  t.ok(reply, 'the framer still delivers the frame')
  t.throws(() => SamsungMdc.parseReply(reply!), { code: 'checksum' })
  try {
    SamsungMdc.parseReply(reply!)
  } catch (err) {
    t.ok(isPanelProtocolError(err, 'checksum'))
  }
  const lg = await harness(t, { protocol: 'lg', faults: { badChecksum: true } })
  lg.send(LgCommercial.powerOn(1))
  await lg.idle()
  t.throws(() => LgCommercial.parseReply(lg.takeWritten()), { code: 'invalid' }, 'no checksum in LG: reply unreadable')
})

t.test('faults combine: delay + garbage + split', async (t) => {
  const h = await harness(t)
  h.panel.setFaults({ ...parseFault('delay:100'), ...parseFault('garbage'), ...parseFault('split:4:5') })
  t.same(h.panel.describeFaults(), ['delay:100', 'split:4:5', 'garbage:00ff7f13'])
  h.send(SamsungMdc.powerOn(1))
  await h.clock.advanceSettling(200)
  await h.idle()
  t.same(createMdcReplyFramer().push(h.takeWritten()).map(hexPreview), [ACK_ON])
  h.panel.clearFaults()
  t.same(h.panel.describeFaults(), [])
})

t.test('unplug closes the serial port', async (t) => {
  const h = await harness(t)
  t.equal(h.transport.isOpen, true)
  h.panel.unplug()
  await h.idle()
  t.equal(h.transport.isOpen, false)
  t.equal(h.binding.isOpen, false)
})

t.test('onHostFrame hook scripts custom behaviour', async (t) => {
  let seen = 0
  const h = await harness(t, {
    onHostFrame: () => {
      seen++
      if (seen === 1) return null // swallow the first command
      if (seen === 2) return Buffer.from('custom')
      return undefined // then behave normally
    },
  })
  h.send(SamsungMdc.powerOn(1))
  await h.idle()
  t.equal(h.takeWritten().length, 0)
  h.send(SamsungMdc.powerOn(1))
  await h.idle()
  t.equal(h.takeWritten().toString(), 'custom')
  h.send(SamsungMdc.powerOn(1))
  await h.idle()
  t.equal(hexPreview(h.takeWritten()), ACK_ON)
  t.equal(seen, 3)
})

t.test('trace: both directions, timestamped, as events and text', async (t) => {
  const h = await harness(t)
  const entries: TraceEntry[] = []
  h.panel.on('trace', (e) => entries.push(e))
  h.send(SamsungMdc.powerOn(1))
  await h.idle()
  t.same(
    entries.map((e) => [e.direction, hexPreview(e.bytes)]),
    [
      ['rx', 'AA 11 01 01 01 14'],
      ['tx', ACK_ON],
    ],
  )
  t.equal(entries[0]!.at, h.clock.now().getTime())
  t.match(formatTrace(entries[1]!), /^2026-01-01T00:00:00\.000Z tx \[serial \/dev\/mock-panel-\d+-\d+\] AA FF 01 03 41 11 01 56 {2}\|\.\.\.\.A\.\.V\|$/)
})
