// DisplayDriver against the simulated panel on firmware-sim's MockBinding harness: each
// protocol, NAK, timeout with retries, split replies, garbage, bad checksum, raw bytes,
// the NEC gap, and unplug + reopen with held or failed commands. The panel and the driver
// share a ManualClock: timeouts, retry delays, silences, gaps and reopen backoff happen at
// the instants the clock is moved to (`drive`), so the test asserts them exactly.
import t, { type Test } from 'tap'
import { ManualClock } from '@svc/shared'
import { CEC_PLAYER_ADDRESS, Cec, P8Code, encodeP8Setup, panelProtocols, splitP8Messages, type PanelProtocolName } from '@svc/shared/panels/index'
import { DEFAULT_GARBAGE, type CecPersonality, type SimProtocol } from '@svc/firmware-sim'
import { DisplayDriver, type DisplayDriverOptions } from '../../src/serial/index.js'
import type { CommandOptions, CommandResult } from '../../src/serial/DisplayDriver.js'
import { drive, mockLine, type MockLine } from './harness.js'

interface Rig {
  line: MockLine
  driver: DisplayDriver
  clock: ManualClock
  /** driver.send, driven on the clock to its outcome. */
  send(bytes: Uint8Array, opts?: CommandOptions): Promise<CommandResult>
}

/** On the rig's ManualClock, which `send` advances: a limit of the clock's time, not the machine's. */
const REPLY_TIMEOUT_MS = 200

async function setup(t: Test, protocol: SimProtocol, opts: Partial<DisplayDriverOptions> = {}): Promise<Rig> {
  const clock = new ManualClock()
  const line = await mockLine({ protocol, clock })
  const driver = new DisplayDriver({
    path: '/dev/mock',
    protocol: protocol === 'raw' ? null : protocol,
    timeoutMs: REPLY_TIMEOUT_MS,
    retryDelayMs: 10,
    reopenDelayMs: 20,
    openPort: line.factory,
    clock,
    ...opts,
  })
  await drive(clock, driver.start(), 'the port to open')
  t.teardown(async () => {
    await driver.stop()
    await line.close()
  })
  return { line, driver, clock, send: (bytes, o) => drive(clock, driver.send(bytes, o)) }
}

const PROTOCOLS: PanelProtocolName[] = ['samsung-mdc', 'lg', 'nec', 'pjlink', 'cec']

for (const protocol of PROTOCOLS) {
  t.test(`${protocol}: power on → ok with the parsed reply; the panel turns on`, async (t) => {
    const { line, send } = await setup(t, protocol)
    const codec = panelProtocols[protocol]
    const r = await send(codec.powerOn(1))
    t.equal(r.outcome, 'ok', r.reason ?? 'ok')
    t.equal(r.attempts, 1)
    t.equal(r.sentHex, codec.powerOn(1).toString('hex'))
    t.ok(r.replyHex.length > 0)
    t.equal(r.reply?.ok, true)
    t.equal(line.mock.panel.model.state.power, 'on')
    const q = await send(codec.powerQuery(1))
    t.equal(q.outcome, 'ok')
    t.ok(q.reply?.power === 'on' || q.reply?.power === 'warming', `power query reads ${q.reply?.power}`)
  })
}

t.test('MDC power on answers exactly the ACK frame', async (t) => {
  const { send } = await setup(t, 'samsung-mdc')
  const r = await send(Buffer.from('AA11010101 14'.replace(/ /g, ''), 'hex'))
  t.equal(r.outcome, 'ok')
  t.equal(r.replyHex, 'aaff0103411101 56'.replace(/ /g, ''))
})

t.test('NAK is reported at once, never retried', async (t) => {
  const { line, send } = await setup(t, 'samsung-mdc')
  line.mock.panel.setFaults({ nak: true })
  const r = await send(panelProtocols['samsung-mdc'].powerOn(1))
  t.equal(r.outcome, 'nak')
  t.equal(r.attempts, 1)
  t.match(r.reason, /rejected/)
  t.equal(line.sent.length, 1)
  t.equal(line.mock.panel.model.state.power, 'off')
})

t.test('silence: timeout after the retries, with growing delays', async (t) => {
  const SILENCE_TIMEOUT_MS = 100 // on the rig's clock; the panel never answers
  const rig = await setup(t, 'lg', { timeoutMs: SILENCE_TIMEOUT_MS, retries: 2, retryDelayMs: 40 })
  const { line, send } = rig
  line.mock.panel.setFaults({ noReply: true })
  const { clock } = rig
  const start = clock.nowMs
  const r = await send(panelProtocols.lg.powerOn(1))
  t.equal(r.outcome, 'timeout')
  t.equal(r.attempts, 3)
  t.equal(line.sent.length, 3, 'three writes')
  t.match(r.reason, /no reply within 100 ms \(3 attempts\)/)
  t.same(
    line.sentAt.map((at) => at - start),
    [0, 100 + 40, 100 + 40 + 100 + 80],
    'each retry after a timeout (100 ms) and a delay that doubles (40 ms, 80 ms)',
  )
  t.equal(clock.nowMs - start, 3 * 100 + 40 + 80, 'the timeout reported when the third attempt timed out')
  line.mock.panel.setFaults({ noReply: false })
  t.equal((await send(panelProtocols.lg.powerOn(1))).outcome, 'ok', 'the next command works')
})

t.test('split replies and garbage before the reply are framed correctly', async (t) => {
  for (const protocol of ['samsung-mdc', 'nec', 'lg'] as const) {
    // A reply a byte every 3 ms (on the clock): well within the 200 ms timeout.
    const { line, send } = await setup(t, protocol, { minGapMs: 0 })
    const codec = panelProtocols[protocol]
    line.mock.panel.setFaults({ split: { chunkSize: 1, gapMs: 3 } })
    const a = await send(codec.powerOn(1))
    t.equal(a.outcome, 'ok', `${protocol} split`)
    line.mock.panel.setFaults({ split: null, garbage: DEFAULT_GARBAGE })
    const b = await send(codec.powerOff(1))
    t.equal(b.outcome, 'ok', `${protocol} garbage`)
    t.equal(line.mock.panel.model.state.power, 'off')
  }
})

t.test('a bad checksum is retried, then failed with the reason', async (t) => {
  const { line, send } = await setup(t, 'samsung-mdc')
  line.mock.panel.setFaults({ badChecksum: true })
  const r = await send(panelProtocols['samsung-mdc'].powerOn(1))
  t.equal(r.outcome, 'failed')
  t.equal(r.reason, 'bad checksum')
  t.equal(r.attempts, 3)
  t.ok(r.replyHex.startsWith('aaff'), 'the bad frame is reported')
  line.mock.panel.setFaults({ badChecksum: false })
  t.equal((await send(panelProtocols['samsung-mdc'].powerOn(1))).outcome, 'ok')
})

t.test('raw bytes: the reply ends on silence; no reply is a timeout', async (t) => {
  const { line, send, clock } = await setup(t, 'raw', { rawSilenceMs: 30 })
  const r = await send(Buffer.from('HELLO\r'))
  t.equal(r.outcome, 'ok')
  t.equal(Buffer.from(r.replyHex, 'hex').toString(), 'HELLO\r', 'the raw panel echoes')
  // The reply in 2-byte chunks, 29 ms apart: one short of the silence, so they join.
  line.mock.panel.setFaults({ split: { chunkSize: 2, gapMs: 29 } })
  const chunks: number[] = []
  const onData = () => chunks.push(clock.nowMs)
  line.current!.on('data', onData)
  t.equal(Buffer.from((await send(Buffer.from('SPLIT IT'))).replyHex, 'hex').toString(), 'SPLIT IT', 'gaps shorter than the silence join')
  t.same(
    chunks.slice(1).map((at, i) => at - chunks[i]!),
    [29, 29, 29],
    'four chunks, 29 ms apart',
  )
  line.current!.off('data', onData)
  line.mock.panel.setFaults({ split: null, noReply: true })
  const none = await send(Buffer.from('X'), { retries: 0 })
  t.equal(none.outcome, 'timeout')
  // A gap longer than the silence ends the reply: the first chunk alone is the answer.
  line.mock.panel.setFaults({ noReply: false, split: { chunkSize: 2, gapMs: 31 } })
  t.equal(Buffer.from((await send(Buffer.from('SPLIT IT'))).replyHex, 'hex').toString(), 'SP', 'a gap longer than the silence ends the reply')
})

t.test('one command in flight; NEC keeps more than 600 ms between packets', async (t) => {
  const { line, driver, clock } = await setup(t, 'nec')
  const at: number[] = []
  line.mock.panel.on('frame', () => at.push(clock.nowMs))
  const codec = panelProtocols.nec
  const [a, b, c] = await drive(clock, Promise.all([driver.send(codec.powerOn(1)), driver.send(codec.powerQuery(1)), driver.send(codec.powerOff(1))]))
  t.same([a.outcome, b.outcome, c.outcome], ['ok', 'ok', 'ok'])
  t.equal(line.mock.panel.model.state.power, 'off', 'in order')
  t.equal(at.length, 3)
  t.same(
    at.slice(1).map((x, i) => x - at[i]!),
    [650, 650],
    'each packet 650 ms after the reply to the one before',
  )
})

t.test('unplug: reopen with backoff; a held command runs after the reopen', async (t) => {
  const { line, send, driver, clock } = await setup(t, 'samsung-mdc', { holdMs: 2000 })
  const codec = panelProtocols['samsung-mdc']
  t.equal((await send(codec.powerOn(1))).outcome, 'ok')
  const closed = new Promise((r) => driver.once('close', r))
  line.refuseOpen = true
  line.unplug()
  t.match(await closed, { disconnected: true })
  t.equal(driver.isOpen, false)
  const held = driver.send(codec.powerOff(1))
  // Reopens 20, 40, 80 ms apart fail (140 ms); the next, 160 ms later, is the one that works.
  await clock.advanceSettling(150)
  t.equal(line.current?.isOpen, false, 'still closed 150 ms after the unplug')
  const opensBefore = line.opens
  line.refuseOpen = false
  const r = await drive(clock, held)
  t.equal(r.outcome, 'ok', 'held, then sent once the port came back')
  t.equal(line.opens, opensBefore + 1)
  t.equal(line.mock.panel.model.state.power, 'off')
})

t.test(
  'cec: each open puts the adapter under the host and has it acknowledge the player, before the first command; a refusal is said, the command goes ahead',
  async (t) => {
    const { line, send, driver } = await setup(t, 'cec', { holdMs: 2000 })
    const adapter = () => (line.mock.panel.personality as CecPersonality).adapter
    const setupHex = encodeP8Setup().map((b) => b.toString('hex'))
    t.same(adapter(), { controlled: false, ackMask: 0 }, 'a fresh adapter: on its own, acknowledging nobody')
    t.equal(line.sent.length, 0, 'nothing is written until there is a command')
    t.equal((await send(Cec.powerQuery(1))).outcome, 'ok')
    t.same(
      line.sent.slice(0, 2).map((b) => b.toString('hex')),
      setupHex,
      'SET_CONTROLLED 1, then SET_ACK_MASK 0x0010 (Playback Device 1), one exchange each',
    )
    t.same(adapter(), { controlled: true, ackMask: 1 << CEC_PLAYER_ADDRESS })
    const q = await send(Cec.powerQuery(1))
    t.equal(q.outcome, 'ok')
    const heard = splitP8Messages(Buffer.from(q.replyHex, 'hex')).filter((m) => m.code === P8Code.frameStart || m.code === P8Code.frameData)
    t.ok(heard.length > 0 && heard.every((m) => m.ack), "the TV's Report Power Status to the player is acknowledged")
    const writes = line.sent.length
    t.equal((await send(Cec.powerQuery(1))).outcome, 'ok')
    t.equal(line.sent.length, writes + 1, 'the set-up is not sent again while the port stays open')

    // Unplugged and back: a new adapter session, set up again; one that refuses is said.
    const closed = new Promise((r) => driver.once('close', r))
    line.unplug()
    await closed
    const warnings: string[] = []
    driver.on('warn', (e) => warnings.push(e.message))
    line.mock.panel.setFaults({ nak: true })
    const refused = await send(Cec.powerQuery(1))
    t.equal(refused.outcome, 'nak', 'the command itself was sent (and refused, as everything is here)')
    t.same(
      line.sent.slice(writes + 1, writes + 4).map((b) => b.toString('hex')),
      [...setupHex, Cec.powerQuery(1).toString('hex')],
      'after the reopen: the set-up again, then the command',
    )
    t.match(warnings, [/cec: the set-up command ff1801fe sent on opening \/dev\/mock: refused/, /cec: the set-up command ff0a0010fe .*refused/])
  },
)

t.test('unplug during a command fails that attempt; retried after the reopen', async (t) => {
  const UNPLUG_TIMEOUT_MS = 500 // on the rig's clock, longer than the 50 ms advanced before the unplug
  const { line, driver, clock } = await setup(t, 'samsung-mdc', { timeoutMs: UNPLUG_TIMEOUT_MS })
  line.mock.panel.setFaults({ noReply: true })
  const pending = driver.send(panelProtocols['samsung-mdc'].powerOn(1))
  await clock.advanceSettling(50)
  t.equal(line.sent.length, 1, 'the first attempt is written')
  line.unplug()
  line.mock.panel.setFaults({ noReply: false })
  const r = await drive(clock, pending)
  t.equal(r.outcome, 'ok')
  t.equal(r.attempts, 2)
})

t.test("whileClosed 'fail' fails commands at once; held ones fail after holdMs", async (t) => {
  const { line, send } = await setup(t, 'lg', { whileClosed: 'fail' })
  line.refuseOpen = true
  line.unplug()
  const r = await send(panelProtocols.lg.powerOn(1))
  t.match(r, { outcome: 'failed', reason: 'port closed', attempts: 0, sentHex: '' })

  const other = await setup(t, 'lg', { holdMs: 100 })
  other.line.refuseOpen = true
  other.line.unplug()
  const from = other.clock.nowMs
  const held = await other.send(panelProtocols.lg.powerOn(1))
  t.match(held, { outcome: 'failed', reason: 'port closed' })
  t.equal(other.clock.nowMs - from, 100, 'failed when holdMs ran out')
})

t.test('a port that cannot be opened is retried with backoff', async (t) => {
  const clock = new ManualClock()
  const line = await mockLine({ protocol: 'samsung-mdc', clock })
  line.refuseOpen = true
  const warnings: number[] = []
  const driver = new DisplayDriver({ path: '/dev/mock', protocol: 'samsung-mdc', openPort: line.factory, reopenDelayMs: 20, holdMs: 3000, clock })
  driver.on('warn', () => warnings.push(clock.nowMs))
  t.teardown(async () => {
    await driver.stop()
    await line.close()
  })
  const start = clock.nowMs
  await drive(clock, driver.start(), 'the first open')
  t.equal(driver.isOpen, false)
  const pending = driver.send(panelProtocols['samsung-mdc'].powerOn(1))
  await clock.advanceSettling(200)
  t.same(
    warnings.map((at) => at - start),
    [0, 20, 60, 140],
    'a failed open at the start, then again after delays that double (20, 40, 80 ms)',
  )
  line.refuseOpen = false
  t.equal((await drive(clock, pending)).outcome, 'ok')
  t.equal(clock.nowMs - start, 300, 'sent after the next reopen (160 ms after the last)')
})

t.test('bad options throw TypeError', async (t) => {
  t.throws(() => new DisplayDriver({ path: '' }), TypeError)
  t.throws(() => new DisplayDriver({ path: '/dev/x', timeoutMs: -1 }), TypeError)
  t.throws(() => new DisplayDriver({ path: '/dev/x', protocol: 'sony' as never }), TypeError)
})
