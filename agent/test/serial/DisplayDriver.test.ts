// DisplayDriver against the simulated panel on firmware-sim's MockBinding harness: each
// protocol, NAK, timeout with retries, split replies, garbage, bad checksum, raw bytes,
// the NEC gap, and unplug + reopen with held or failed commands.
import t, { type Test } from 'tap'
import { panelProtocols, type PanelProtocolName } from '@svc/shared/panels/index'
import { DEFAULT_GARBAGE, type SimProtocol } from '@svc/firmware-sim'
import { DisplayDriver, type DisplayDriverOptions } from '../../src/serial/index.js'
import { mockLine, type MockLine } from './harness.js'

async function setup(t: Test, protocol: SimProtocol, opts: Partial<DisplayDriverOptions> = {}): Promise<{ line: MockLine; driver: DisplayDriver }> {
  const line = await mockLine({ protocol })
  const driver = new DisplayDriver({
    path: '/dev/mock',
    protocol: protocol === 'raw' ? null : protocol,
    timeoutMs: 200,
    retryDelayMs: 10,
    reopenDelayMs: 20,
    openPort: line.factory,
    ...opts,
  })
  await driver.start()
  t.teardown(async () => {
    await driver.stop()
    await line.close()
  })
  return { line, driver }
}

const PROTOCOLS: PanelProtocolName[] = ['samsung-mdc', 'lg', 'nec', 'pjlink']

for (const protocol of PROTOCOLS) {
  t.test(`${protocol}: power on → ok with the parsed reply; the panel turns on`, async (t) => {
    const { line, driver } = await setup(t, protocol)
    const codec = panelProtocols[protocol]
    const r = await driver.send(codec.powerOn(1))
    t.equal(r.outcome, 'ok', r.reason ?? 'ok')
    t.equal(r.attempts, 1)
    t.equal(r.sentHex, codec.powerOn(1).toString('hex'))
    t.ok(r.replyHex.length > 0)
    t.equal(r.reply?.ok, true)
    t.equal(line.mock.panel.model.state.power, 'on')
    const q = await driver.send(codec.powerQuery(1))
    t.equal(q.outcome, 'ok')
    t.ok(q.reply?.power === 'on' || q.reply?.power === 'warming', `power query reads ${q.reply?.power}`)
  })
}

t.test('MDC power on answers exactly the ACK frame', async (t) => {
  const { driver } = await setup(t, 'samsung-mdc')
  const r = await driver.send(Buffer.from('AA11010101 14'.replace(/ /g, ''), 'hex'))
  t.equal(r.outcome, 'ok')
  t.equal(r.replyHex, 'aaff0103411101 56'.replace(/ /g, ''))
})

t.test('NAK is reported at once, never retried', async (t) => {
  const { line, driver } = await setup(t, 'samsung-mdc')
  line.mock.panel.setFaults({ nak: true })
  const r = await driver.send(panelProtocols['samsung-mdc'].powerOn(1))
  t.equal(r.outcome, 'nak')
  t.equal(r.attempts, 1)
  t.match(r.reason, /rejected/)
  t.equal(line.sent.length, 1)
  t.equal(line.mock.panel.model.state.power, 'off')
})

t.test('silence: timeout after the retries, with growing delays', async (t) => {
  const { line, driver } = await setup(t, 'lg', { timeoutMs: 100, retries: 2, retryDelayMs: 40 })
  line.mock.panel.setFaults({ noReply: true })
  const started = Date.now()
  const r = await driver.send(panelProtocols.lg.powerOn(1))
  const took = Date.now() - started
  t.equal(r.outcome, 'timeout')
  t.equal(r.attempts, 3)
  t.equal(line.sent.length, 3, 'three writes')
  t.match(r.reason, /no reply within 100 ms \(3 attempts\)/)
  t.ok(took >= 3 * 100 + 40 + 80, `3 timeouts + 40 ms + 80 ms delays (took ${took} ms)`)
  line.mock.panel.setFaults({ noReply: false })
  t.equal((await driver.send(panelProtocols.lg.powerOn(1))).outcome, 'ok', 'the next command works')
})

t.test('split replies and garbage before the reply are framed correctly', async (t) => {
  for (const protocol of ['samsung-mdc', 'nec', 'lg'] as const) {
    // A reply sent a byte every 3 ms takes longer than the usual 200 ms to arrive when the
    // machine is busy; the subject here is the framing, so the wait is long.
    const { line, driver } = await setup(t, protocol, { minGapMs: 0, timeoutMs: 5000 })
    const codec = panelProtocols[protocol]
    line.mock.panel.setFaults({ split: { chunkSize: 1, gapMs: 3 } })
    const a = await driver.send(codec.powerOn(1))
    t.equal(a.outcome, 'ok', `${protocol} split`)
    line.mock.panel.setFaults({ split: null, garbage: DEFAULT_GARBAGE })
    const b = await driver.send(codec.powerOff(1))
    t.equal(b.outcome, 'ok', `${protocol} garbage`)
    t.equal(line.mock.panel.model.state.power, 'off')
  }
})

t.test('a bad checksum is retried, then failed with the reason', async (t) => {
  const { line, driver } = await setup(t, 'samsung-mdc')
  line.mock.panel.setFaults({ badChecksum: true })
  const r = await driver.send(panelProtocols['samsung-mdc'].powerOn(1))
  t.equal(r.outcome, 'failed')
  t.equal(r.reason, 'bad checksum')
  t.equal(r.attempts, 3)
  t.ok(r.replyHex.startsWith('aaff'), 'the bad frame is reported')
  line.mock.panel.setFaults({ badChecksum: false })
  t.equal((await driver.send(panelProtocols['samsung-mdc'].powerOn(1))).outcome, 'ok')
})

t.test('raw bytes: the reply ends on silence; no reply is a timeout', async (t) => {
  const { line, driver } = await setup(t, 'raw', { rawSilenceMs: 30 })
  const r = await driver.send(Buffer.from('HELLO\r'))
  t.equal(r.outcome, 'ok')
  t.equal(Buffer.from(r.replyHex, 'hex').toString(), 'HELLO\r', 'the raw panel echoes')
  line.mock.panel.setFaults({ split: { chunkSize: 2, gapMs: 5 } })
  t.equal(Buffer.from((await driver.send(Buffer.from('SPLIT IT'))).replyHex, 'hex').toString(), 'SPLIT IT', 'gaps shorter than the silence join')
  line.mock.panel.setFaults({ split: null, noReply: true })
  const none = await driver.send(Buffer.from('X'), { retries: 0 })
  t.equal(none.outcome, 'timeout')
})

t.test('one command in flight; NEC keeps more than 600 ms between packets', async (t) => {
  const { line, driver } = await setup(t, 'nec')
  const at: number[] = []
  line.mock.panel.on('frame', () => at.push(Date.now()))
  const codec = panelProtocols.nec
  const [a, b, c] = await Promise.all([driver.send(codec.powerOn(1)), driver.send(codec.powerQuery(1)), driver.send(codec.powerOff(1))])
  t.same([a.outcome, b.outcome, c.outcome], ['ok', 'ok', 'ok'])
  t.equal(line.mock.panel.model.state.power, 'off', 'in order')
  t.equal(at.length, 3)
  for (let i = 1; i < at.length; i++) t.ok(at[i]! - at[i - 1]! >= 600, `gap ${at[i]! - at[i - 1]!} ms`)
})

t.test('unplug: reopen with backoff; a held command runs after the reopen', async (t) => {
  const { line, driver } = await setup(t, 'samsung-mdc', { holdMs: 2000 })
  const codec = panelProtocols['samsung-mdc']
  t.equal((await driver.send(codec.powerOn(1))).outcome, 'ok')
  const closed = new Promise((r) => driver.once('close', r))
  line.refuseOpen = true
  line.unplug()
  t.match(await closed, { disconnected: true })
  t.equal(driver.isOpen, false)
  const held = driver.send(codec.powerOff(1))
  await new Promise((r) => setTimeout(r, 150))
  const opensBefore = line.opens
  line.refuseOpen = false
  const r = await held
  t.equal(r.outcome, 'ok', 'held, then sent once the port came back')
  t.equal(line.opens, opensBefore + 1)
  t.equal(line.mock.panel.model.state.power, 'off')
})

t.test('unplug during a command fails that attempt; retried after the reopen', async (t) => {
  const { line, driver } = await setup(t, 'samsung-mdc', { timeoutMs: 500 })
  line.mock.panel.setFaults({ noReply: true })
  const pending = driver.send(panelProtocols['samsung-mdc'].powerOn(1))
  await new Promise((r) => setTimeout(r, 50))
  line.unplug()
  line.mock.panel.setFaults({ noReply: false })
  const r = await pending
  t.equal(r.outcome, 'ok')
  t.equal(r.attempts, 2)
})

t.test("whileClosed 'fail' fails commands at once; held ones fail after holdMs", async (t) => {
  const { line, driver } = await setup(t, 'lg', { whileClosed: 'fail' })
  line.refuseOpen = true
  line.unplug()
  const r = await driver.send(panelProtocols.lg.powerOn(1))
  t.match(r, { outcome: 'failed', reason: 'port closed', attempts: 0, sentHex: '' })

  const other = await setup(t, 'lg', { holdMs: 100 })
  other.line.refuseOpen = true
  other.line.unplug()
  const held = await other.driver.send(panelProtocols.lg.powerOn(1))
  t.match(held, { outcome: 'failed', reason: 'port closed' })
})

t.test('a port that cannot be opened is retried with backoff', async (t) => {
  const line = await mockLine({ protocol: 'samsung-mdc' })
  line.refuseOpen = true
  const warnings: Error[] = []
  const driver = new DisplayDriver({ path: '/dev/mock', protocol: 'samsung-mdc', openPort: line.factory, reopenDelayMs: 20, holdMs: 3000 })
  driver.on('warn', (e) => warnings.push(e))
  t.teardown(async () => {
    await driver.stop()
    await line.close()
  })
  await driver.start()
  t.equal(driver.isOpen, false)
  const pending = driver.send(panelProtocols['samsung-mdc'].powerOn(1))
  await new Promise((r) => setTimeout(r, 200))
  t.ok(warnings.length >= 2 && warnings.length <= 4, `a few attempts with doubling delays (${warnings.length})`)
  line.refuseOpen = false
  t.equal((await pending).outcome, 'ok')
})

t.test('bad options throw TypeError', async (t) => {
  t.throws(() => new DisplayDriver({ path: '' }), TypeError)
  t.throws(() => new DisplayDriver({ path: '/dev/x', timeoutMs: -1 }), TypeError)
  t.throws(() => new DisplayDriver({ path: '/dev/x', protocol: 'sony' as never }), TypeError)
})
