// One integration test over a REAL pseudo-terminal pair (socat): the DisplayDriver opens
// the host end with serialport, firmware-sim's PtyTransport holds the other.
import t from 'tap'
import { HANG_GUARD_MS, socat, toolTest } from '@svc/shared/testing'
import { SimulatedPanel, PtyTransport } from '@svc/firmware-sim'
import { DisplayDriver } from '../../src/serial/index.js'

/** A hang guard: the simulated panel answers every command; socat's relay may be slow to run on a busy machine. */
const REPLY_GUARD_MS = HANG_GUARD_MS

toolTest(t, socat, 'MDC power on over a socat pty → ok with the ACK bytes', async (t) => {
  const panel = new SimulatedPanel({ protocol: 'samsung-mdc' })
  const pty = new PtyTransport(panel)
  await pty.start()
  const driver = new DisplayDriver({ path: pty.hostPath, protocol: 'samsung-mdc', timeoutMs: REPLY_GUARD_MS })
  t.teardown(async () => {
    await driver.stop()
    await pty.stop()
    panel.close()
  })
  await driver.start()
  t.equal(driver.isOpen, true, `opened ${pty.hostPath}`)
  const r = await driver.send(Buffer.from('aa1101010114', 'hex'))
  t.equal(r.outcome, 'ok')
  t.equal(r.sentHex, 'aa1101010114')
  t.equal(r.replyHex, 'aaff0103411101' + '56', 'AA FF 01 03 41 11 01 56: ACK, power, on')
  t.equal(panel.model.state.power, 'on')
})
