// A CEC TV through a Pulse-Eight adapter, over a REAL pseudo-terminal pair (socat): the
// DisplayDriver opens the host end with serialport, firmware-sim's PtyTransport holds the
// other and plays the adapter with a TV behind it. Power on (Image View On, then Active
// Source), standby, status, input, and the faults: a TV that ignores standby, a TV
// without CEC (reported as such, not as "off").
import t, { type Test } from 'tap'
import { HANG_GUARD_MS, socat, toolTest } from '@svc/shared/testing'
import { CEC_PLAYER_ADDRESS, Cec, CecReplyFramer, P8Code, splitCecCommand, splitP8Messages } from '@svc/shared/panels/index'
import type { PanelReport } from '@svc/shared/mqtt/index'
import { SimulatedPanel, PtyTransport, type CecPersonality } from '@svc/firmware-sim'
import { DisplayDriver, PanelPoller } from '../../src/serial/index.js'

/**
 * A hang guard: the adapter and the TV answer every command here, and socat's relay may be
 * slow to run on a busy machine. Request Active Source while the player shows goes
 * unanswered by design: the poller waits the CEC answer window for it instead (its limit is
 * the subject: no answer ever comes, so no machine is too slow for it).
 */
const REPLY_GUARD_MS = HANG_GUARD_MS
const CEC_ANSWER_WINDOW_MS = 1000

async function rig(t: Test, playerPort = 2) {
  const panel = new SimulatedPanel({ protocol: 'cec', state: { id: playerPort, power: 'standby', input: 'hdmi1' } })
  const pty = new PtyTransport(panel)
  await pty.start()
  const driver = new DisplayDriver({ path: pty.hostPath, protocol: 'cec', timeoutMs: REPLY_GUARD_MS, retryDelayMs: 10 })
  const reports: PanelReport[] = []
  const poller = new PanelPoller(driver, {
    protocol: 'cec',
    setId: playerPort,
    pollSeconds: 0,
    onReport: (r) => reports.push(r),
    inputAnswerMs: CEC_ANSWER_WINDOW_MS,
  })
  t.teardown(async () => {
    await poller.stop()
    await driver.stop()
    await pty.stop()
    panel.close()
  })
  await driver.start()
  t.equal(driver.isOpen, true, `opened ${pty.hostPath}`)
  return { panel, driver, poller, reports }
}

toolTest(t, socat, 'CEC over a socat pty: power on, status, input, standby', async (t) => {
  const { panel, driver, poller } = await rig(t, 2)
  const on = await driver.send(Cec.powerOn(2))
  t.equal(on.outcome, 'ok', on.reason ?? 'ok')
  t.equal(on.attempts, 1)
  t.equal(on.sentHex, Cec.powerOn(2).toString('hex'), 'both transmissions were sent')
  t.same([panel.model.state.power, panel.model.state.input], ['on', 'hdmi2'], 'Image View On turned the TV on, Active Source 2.0.0.0 chose the player')
  t.ok(on.replyHex.endsWith('ff10fe'), 'the reply ends with TRANSMIT_SUCCEEDED')
  t.same(
    (panel.personality as CecPersonality).adapter,
    { controlled: true, ackMask: 1 << CEC_PLAYER_ADDRESS },
    'the adapter was set up first: the host controls it, it acknowledges the player',
  )

  const status = await driver.send(Cec.powerQuery(2))
  t.match(status, { outcome: 'ok', reply: { kind: 'power', power: 'on', id: 0 } }, 'Report Power Status from the TV')
  const heard = splitP8Messages(Buffer.from(status.replyHex, 'hex')).filter((m) => m.code === P8Code.frameStart || m.code === P8Code.frameData)
  t.ok(heard.length > 0 && heard.every((m) => m.ack), 'acknowledged on the bus (the TV does not send it again)')
  t.match(await poller.readNow(), { power: 'on' }, 'the poller reads on (the player shows: no input answer)')

  const input = await driver.send(Cec.setInput(2, 'hdmi3'))
  t.equal(input.outcome, 'ok')
  t.equal(panel.model.state.input, 'hdmi3', 'Set Stream Path 3.0.0.0')
  // Another source shows, so an answer is due: a poller that waits for it as long as the hang guard.
  const patient = new PanelPoller(driver, { protocol: 'cec', setId: 2, pollSeconds: 0, onReport: () => undefined, inputAnswerMs: REPLY_GUARD_MS })
  t.match(await patient.readNow(), { power: 'on', input: 'hdmi3' }, 'Request Active Source: the device on HDMI 3 answers')

  const standby = await driver.send(Cec.powerOff(2))
  t.equal(standby.outcome, 'ok')
  t.equal(panel.model.state.power, 'standby')
  t.match(await driver.send(Cec.powerQuery(2)), { outcome: 'ok', reply: { power: 'standby' } })
  t.match(await poller.readNow(), { power: 'off' }, 'standby reads as off')

  const muted = await driver.send(Cec.setMute(2, true))
  t.equal(muted.outcome, 'ok')
  t.equal(panel.model.state.muted, true, 'User Control Pressed Mute Function, then Released')
})

toolTest(t, socat, 'CEC faults over a socat pty: a TV without CEC is "no-cec", not off; a TV that ignores standby stays on', async (t) => {
  const { panel, driver, poller, reports } = await rig(t, 1)
  panel.setFaults({ noCec: true })
  const q = await driver.send(Cec.powerQuery(1))
  t.match(q, { outcome: 'nak', reason: /no-ack/, attempts: 1 }, 'TRANSMIT_FAILED_ACK: nobody acknowledged')
  const report = await poller.readNow()
  t.match(report, { power: 'unknown', problem: 'no-cec' }, 'reported as a TV that does not answer CEC')
  t.notOk(report?.power === 'off')
  t.equal(reports.at(-1)?.problem, 'no-cec')

  panel.clearFaults()
  t.match(await poller.readNow(), { power: 'off' }, 'CEC back: standby reads off, no problem')
  t.equal(reports.at(-1)?.problem, undefined)

  t.equal((await driver.send(Cec.powerOn(1))).outcome, 'ok')
  panel.setFaults({ ignoreStandby: true })
  const standby = await driver.send(Cec.powerOff(1))
  t.equal(standby.outcome, 'ok', 'Standby acknowledged')
  t.match(await poller.readNow(), { power: 'on' }, 'read back: still on')

  // garbage on the line before the answer costs nothing
  panel.clearFaults()
  panel.setFaults({ garbage: Buffer.from([0x00, 0x13, 0xfe, 0x7f]) })
  t.match(await driver.send(Cec.powerQuery(1)), { outcome: 'ok', reply: { power: 'on' } })
  // a broken escape is an unreadable reply, retried, then failed
  panel.clearFaults()
  panel.setFaults({ badChecksum: true })
  t.match(await driver.send(Cec.powerQuery(1)), { outcome: 'failed', reason: /unreadable reply.*escape/, attempts: 3 })
})

t.test('a reply framer made for a piece of the command', async (t) => {
  const pieces = splitCecCommand(Cec.powerOn(1))
  t.equal(pieces.length, 2)
  t.ok(new CecReplyFramer(pieces[0]).pending === 0)
})

t.test('a set id the protocol cannot address (CEC HDMI input 0) reads unknown instead of throwing', async (t) => {
  const sent: Buffer[] = []
  const driver = { send: async (b: Uint8Array) => (sent.push(Buffer.from(b)), { outcome: 'ok' as const, sentHex: '', replyHex: '', attempts: 1 }) }
  const reports: PanelReport[] = []
  const poller = new PanelPoller(driver, { protocol: 'cec', setId: 0, pollSeconds: 0, onReport: (r) => reports.push(r) })
  t.match(await poller.readNow(), { power: 'unknown' })
  t.equal(sent.length, 0, 'nothing sent')
  t.equal(reports.length, 1)
})
