// SerialJobRunner and PanelPoller over the MockBinding harness; the tcp:// port against
// firmware-sim's TCP listener (a serial-over-IP gateway).
import t from 'tap'
import { panelProtocols } from '@svc/shared/panels/index'
import { parseJobResult, type SerialJob } from '@svc/shared/mqtt/index'
import { SimulatedPanel, TcpTransport } from '@svc/firmware-sim'
import { DisplayDriver, PanelPoller, SerialJobRunner } from '../../src/serial/index.js'
import { ManualClock } from '@svc/shared'
import { drive, mockLine } from './harness.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

/** A hang guard: the panel answers; on a busy machine its answer can be late by seconds. */
const REPLY_GUARD_MS = HANG_GUARD_MS
/** The limit under test where the panel is silent (it never answers, so no machine is too slow for it). */
const SILENT_TIMEOUT_MS = 50

const job = (bytesHex: string, extra: Partial<SerialJob> = {}): SerialJob => ({
  id: 'sjob_1',
  kind: 'serial',
  bytesHex,
  createdAt: '2026-06-01T12:00:00.000Z',
  ...extra,
})

t.test('runner: a job becomes a valid job result for each outcome', async (t) => {
  const line = await mockLine({ protocol: 'samsung-mdc' })
  // The timeouts the test wants are set per job.
  const driver = new DisplayDriver({ path: '/dev/mock', openPort: line.factory, timeoutMs: REPLY_GUARD_MS, retries: 0 })
  await driver.start()
  t.teardown(async () => {
    await driver.stop()
    await line.close()
  })
  const runner = new SerialJobRunner(driver, () => new Date('2026-06-01T12:00:01.000Z'))
  const ok = await runner.run(job('aa1101010114', { protocol: 'samsung-mdc' }))
  t.same(ok, {
    jobId: 'sjob_1',
    kind: 'serial',
    sentHex: 'aa1101010114',
    replyHex: 'aaff01034111015 6'.replace(/ /g, ''),
    outcome: 'ok',
    at: '2026-06-01T12:00:01.000Z',
  })
  line.mock.panel.setFaults({ nak: true })
  const nak = await runner.run(job(panelProtocols['samsung-mdc'].powerOff(1).toString('hex'), { protocol: 'samsung-mdc' }))
  t.equal(nak.outcome, 'nak')
  line.mock.panel.setFaults({ nak: false, noReply: true })
  const timeout = await runner.run(job(panelProtocols['samsung-mdc'].powerOff(1).toString('hex'), { protocol: 'samsung-mdc', timeoutMs: SILENT_TIMEOUT_MS }))
  t.equal(timeout.outcome, 'timeout')
  const raw = await runner.run(job(panelProtocols['samsung-mdc'].powerOff(1).toString('hex'), { protocol: 'unknown-codec', timeoutMs: SILENT_TIMEOUT_MS }))
  t.equal(raw.outcome, 'timeout', 'an unknown protocol is read raw')
  const bad = await runner.run(job('zz'))
  t.match(bad, { outcome: 'failed', reason: /hex/ })
  for (const r of [ok, nak, timeout, raw, bad]) t.ok(parseJobResult(JSON.stringify(r)).ok, `${r.outcome} result validates`)
})

t.test('poller: power state through the driver; unknown when the panel is silent', async (t) => {
  // On a ManualClock: the silent panel's timeout passes when the test advances it.
  const clock = new ManualClock()
  const line = await mockLine({ protocol: 'lg', clock })
  const POLL_TIMEOUT_MS = 500 // on the clock
  const driver = new DisplayDriver({ path: '/dev/mock', protocol: 'lg', openPort: line.factory, timeoutMs: POLL_TIMEOUT_MS, retries: 0, clock })
  await drive(clock, driver.start(), 'the port to open')
  const reports: unknown[] = []
  const poller = new PanelPoller(driver, {
    protocol: 'lg',
    setId: 1,
    pollSeconds: 60,
    onReport: (r) => reports.push(r),
    now: () => new Date('2026-06-01T12:00:00.000Z'),
  })
  t.teardown(async () => {
    await poller.stop()
    await driver.stop()
    await line.close()
  })
  t.same(await drive(clock, poller.pollOnce()), { power: 'off', at: '2026-06-01T12:00:00.000Z' })
  await drive(clock, driver.send(panelProtocols.lg.powerOn(1)))
  t.equal((await drive(clock, poller.pollOnce())).power, 'on')
  line.mock.panel.setFaults({ noReply: true })
  t.equal((await drive(clock, poller.pollOnce())).power, 'unknown')
  t.equal(reports.length, 3, 'every poll is reported')
  t.throws(() => new PanelPoller(driver, { protocol: 'lg', setId: 1, pollSeconds: -1, onReport: () => undefined }), TypeError)
})

t.test('tcp://host:port reaches a serial-over-IP gateway; a dropped connection reopens', async (t) => {
  const panel = new SimulatedPanel({ protocol: 'samsung-mdc' })
  const tcp = new TcpTransport(panel, { port: 0 })
  await tcp.start()
  const driver = new DisplayDriver({ path: `tcp://127.0.0.1:${tcp.port}`, protocol: 'samsung-mdc', timeoutMs: REPLY_GUARD_MS, reopenDelayMs: 20 })
  t.teardown(async () => {
    await driver.stop()
    await tcp.stop()
    panel.close()
  })
  await driver.start()
  t.equal(driver.isOpen, true)
  t.equal((await driver.send(panelProtocols['samsung-mdc'].powerOn(1))).outcome, 'ok')
  const closed = new Promise((r) => driver.once('close', r))
  panel.unplug()
  t.match(await closed, { disconnected: true })
  const r = await driver.send(panelProtocols['samsung-mdc'].powerOff(1))
  t.equal(r.outcome, 'ok', 'reopened and sent')
  t.equal(panel.model.state.power, 'off')
})
