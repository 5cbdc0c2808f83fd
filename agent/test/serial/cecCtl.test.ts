// The kernel's /dev/cecN through cec-ctl: the panel protocol `cec` drives it exactly like a
// Pulse-Eight adapter on a serial port. The real cec-ctl (v4l-utils) is run where it can
// be: against a CEC device this machine does not have, its own error must come through.
// A TV on a CEC line is not something CI has, so the exchanges spawn a stand-in cec-ctl
// (fake-cec-ctl/) that keeps a TV's state and prints what cec-ctl prints; cecCtlAnswer is
// also checked on cec-ctl's output as v4l-utils prints it.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { EventEmitter } from 'node:events'
import { Cec, P8Code, encodeP8Message, encodeP8Transmit, parseCecReply, splitP8Messages } from '@svc/shared/panels/index'
import { ManualClock, settle } from '@svc/shared'
import type { PanelReport } from '@svc/shared/mqtt/index'
import { CecCtlPort, DisplayDriver, PanelPoller, cecCtlAnswer, cecCtlArgs, isCecDevicePath, openPanelPort } from '../../src/serial/index.js'
import { HANG_GUARD_MS, onPath, toolTest, type SystemTool } from '@svc/shared/testing'
import { tempDir } from '../helpers.js'

const FAKE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fake-cec-ctl')
/**
 * A hang guard, not a limit under test: every transmission here is a stand-in cec-ctl
 * process that answers and exits, and on a busy machine starting one has taken over 5 s.
 */
const RUN_GUARD_MS = HANG_GUARD_MS
/**
 * The driver's reply limit, on the driver's ManualClock (see rig): a limit of the clock's time,
 * which moves only when an exchange is left waiting for it (and then the test fails).
 */
const REPLY_LIMIT_MS = 1000

/**
 * The driver's time is a ManualClock that no test advances: an exchange that waited for the
 * driver's reply timeout would never end, so every exchange here must end on the stand-in's
 * answers alone (`answers` counts the transmit results the port has given).
 */
function rig(t: Test, state: Record<string, unknown>, device = '/dev/cec0') {
  const dir = tempDir(t)
  const stateFile = path.join(dir, 'tv.json')
  const logFile = path.join(dir, 'calls.log')
  fs.writeFileSync(stateFile, JSON.stringify(state))
  const env = { ...process.env, FAKE_CEC_STATE: stateFile, FAKE_CEC_LOG: logFile }
  const clock = new ManualClock()
  const answered = new EventEmitter<{ result: [] }>()
  let results = 0
  const driver = new DisplayDriver({
    path: device,
    protocol: 'cec',
    timeoutMs: REPLY_LIMIT_MS,
    retries: 0,
    clock,
    openPort: (o) => {
      const port = new CecCtlPort(o.path, { env, command: path.join(FAKE, 'cec-ctl'), runTimeoutMs: RUN_GUARD_MS })
      port.on('data', (chunk: Buffer) => {
        for (const m of splitP8Messages(chunk)) if (m.code >= P8Code.transmitSucceeded && m.code <= P8Code.transmitFailedTimeoutLine) results++
        answered.emit('result')
      })
      return port
    },
  })
  const reports: PanelReport[] = []
  const poller = new PanelPoller(driver, { protocol: 'cec', setId: 1, pollSeconds: 0, onReport: (r) => reports.push(r) })
  t.teardown(async () => {
    await poller.stop()
    await driver.stop()
  })
  /**
   * Runs one exchange to its end without moving the driver's clock. Once the port has given
   * `transmissions` more transmit results, the exchange has all its answers: if it still has
   * not ended then, it waits for the driver's timeout, which the clock is moved to (so the
   * test goes on) and reported.
   */
  const exchange = async <T>(transmissions: number, run: () => Promise<T>): Promise<{ value: T; waitedMs: number }> => {
    const from = clock.nowMs
    const until = results + transmissions
    let ended = false
    const p = run().finally(() => (ended = true))
    while (results < until && !ended) await new Promise<void>((r) => answered.once('result', () => r()))
    await settle()
    if (!ended) await clock.advanceSettling(REPLY_LIMIT_MS)
    return { value: await p, waitedMs: clock.nowMs - from }
  }
  return {
    driver,
    poller,
    exchange,
    tv: () => JSON.parse(fs.readFileSync(stateFile, 'utf8')) as Record<string, unknown>,
    set: (s: Record<string, unknown>) => fs.writeFileSync(stateFile, JSON.stringify(s)),
    calls: () =>
      fs
        .readFileSync(logFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as string[]),
  }
}

t.test('/dev/cecN paths open through cec-ctl, others through serialport', async (t) => {
  t.ok(isCecDevicePath('/dev/cec0'))
  t.notOk(isCecDevicePath('/dev/ttyUSB0'))
  t.notOk(isCecDevicePath('/dev/cec0/../ttyS0'))
  t.ok(openPanelPort({ path: '/dev/cec1', baudRate: 9600, dataBits: 8, parity: 'none', stopBits: 1 }) instanceof CecCtlPort)
})

t.test('cec-ctl: power on, status, standby, input and mute, one cec-ctl per transmission, none waiting for the reply timeout', async (t) => {
  const { driver, poller, tv, calls, exchange } = rig(t, { power: 'standby', input: '2.0.0.0' })
  await driver.start()
  t.equal(driver.isOpen, true)
  t.same(calls()[0], ['-d', '/dev/cec0', '--playback'], 'configured as a playback device on open')
  const on = await exchange(2, () => driver.send(Cec.powerOn(1)))
  t.equal(on.value.outcome, 'ok', on.value.reason ?? 'ok')
  t.equal(on.waitedMs, 0, 'power on: no wait for the reply timeout')
  t.same(tv(), { power: 'on', input: '1.0.0.0' })
  t.same(calls().slice(1, 3), [
    ['-d', '/dev/cec0', '--to', '0', '--image-view-on'],
    ['-d', '/dev/cec0', '--to', '15', '--active-source', 'phys-addr=1.0.0.0'],
  ])
  // Power, then the input: Request Active Source, whose answer (a broadcast) cec-ctl cannot hear.
  const read = await exchange(2, () => poller.readNow())
  t.match(read.value, { power: 'on' }, 'Report Power Status read from the output')
  t.same(calls().at(-1), ['-d', '/dev/cec0', '--to', '15', '--request-active-source'], 'the input was asked')
  t.equal(read.waitedMs, 0, 'the read ends with the transmission: no wait for an answer cec-ctl cannot hear')
  const off = await exchange(1, () => driver.send(Cec.powerOff(1)))
  t.equal(off.value.outcome, 'ok')
  t.equal(tv().power, 'standby')
  const query = await exchange(1, () => driver.send(Cec.powerQuery(1)))
  t.match(query.value, { outcome: 'ok', reply: { power: 'standby', id: 0 } })
  const input = await exchange(1, () => driver.send(Cec.setInput(1, 'hdmi3')))
  t.equal(input.value.outcome, 'ok')
  t.equal(tv().input, '3.0.0.0')
  const mute = await exchange(2, () => driver.send(Cec.setMute(1, true)))
  t.equal(mute.value.outcome, 'ok')
  t.same(calls().at(-2), ['-d', '/dev/cec0', '--to', '0', '--user-control-pressed', 'ui-cmd=0x65'])
  t.same(calls().at(-1), ['-d', '/dev/cec0', '--to', '0', '--user-control-released'])
  t.same([off.waitedMs, query.waitedMs, input.waitedMs, mute.waitedMs], [0, 0, 0, 0], 'standby, status, input and mute: no wait for the reply timeout')
})

t.test('cec-ctl: a TV without CEC is reported as such; a missing device fails to open', async (t) => {
  const { driver, poller } = rig(t, { power: 'on', input: '1.0.0.0', noCec: true })
  await driver.start()
  t.match(await driver.send(Cec.powerQuery(1)), { outcome: 'nak', reason: /no-ack/ })
  t.match(await poller.readNow(), { power: 'unknown', problem: 'no-cec' })

  const missing = rig(t, { power: 'on' }, '/dev/cec7')
  const warned = new Promise<Error>((resolve) => missing.driver.once('warn', resolve))
  await missing.driver.start()
  t.match((await warned).message, /--playback failed: Failed to open \/dev\/cec7/)
  t.equal(missing.driver.isOpen, false)
})

const cecCtl: SystemTool = { name: 'cec-ctl', install: 'apt-get install -y v4l-utils', found: (env) => onPath('cec-ctl', env) }

toolTest(t, cecCtl, 'the real cec-ctl: a CEC device that is not there fails to open, with its message', async (t) => {
  const driver = new DisplayDriver({ path: '/dev/cec63', protocol: 'cec', reopenDelayMs: 60_000 })
  const warned = new Promise<Error>((resolve) => driver.once('warn', resolve))
  await driver.start()
  t.teardown(() => driver.stop())
  t.match((await warned).message, /cec-ctl -d \/dev\/cec63 --playback failed: .*\/dev\/cec63/)
  t.equal(driver.isOpen, false)
  t.match(await new DisplayDriver({ path: '/dev/cec63', protocol: 'cec', whileClosed: 'fail' }).send(Cec.powerQuery(1)), {
    outcome: 'failed',
    reason: 'driver stopped',
  })
})

t.test("cecCtlAnswer reads cec-ctl's output", async (t) => {
  const sent = { initiator: 4, destination: 0, opcode: 0x8f, operands: new Uint8Array() }
  const reply = cecCtlAnswer(
    {
      code: 0,
      stdout:
        'Transmit from Playback Device 1 to TV (4 to 0):\nGIVE_DEVICE_POWER_STATUS (0x8f)\n    Received from TV (0):\n    REPORT_POWER_STATUS (0x90):\n\tpwr-state: in transition from standby to on (0x02)\n\tSequence: 911 Tx Timestamp: 72024.122s Rx Timestamp: 72024.214s\n\tApproximate response time: 19 ms\n',
      stderr: '',
    },
    sent,
  )
  t.same(parseCecReply(reply), { ok: true, kind: 'power', id: 0, power: 'warming', value: 'warming' })
  const nack = cecCtlAnswer(
    { code: 0, stdout: 'Transmit from Playback Device 1 to TV (4 to 0):\nSTANDBY (0x36)\n\tTx, Not Acknowledged (4), Max Retries\n', stderr: '' },
    sent,
  )
  t.same(nack, encodeP8Message({ code: P8Code.transmitFailedAck, data: new Uint8Array() }))
  const failed = cecCtlAnswer({ code: 1, stdout: '', stderr: 'Failed to open /dev/cec0' }, sent)
  t.same(parseCecReply(failed), { ok: false, nak: true, kind: 'other', errorCode: 'timeout-line' })
  const abort = cecCtlAnswer(
    {
      code: 0,
      stdout:
        'Transmit from Playback Device 1 to TV (4 to 0):\nGIVE_DEVICE_POWER_STATUS (0x8f)\n    Received from TV (0):\n    FEATURE_ABORT (0x00):\n\tabort-msg: 143 (0x8f, GIVE_DEVICE_POWER_STATUS)\n\treason: Refused (0x04)\n',
      stderr: '',
    },
    sent,
  )
  t.match(parseCecReply(abort), { ok: false, errorCode: 'feature-abort:4' })
  // Request Active Source is broadcast: cec-ctl prints no answer, and the port says none will come.
  const ras = { initiator: 4, destination: 15, opcode: 0x85, operands: new Uint8Array() }
  const unanswered = cecCtlAnswer(
    { code: 0, stdout: 'Transmit from Playback Device 1 to all (4 to 15):\nREQUEST_ACTIVE_SOURCE (0x85)\n\tSequence: 7 Tx Timestamp: 1000.000s\n', stderr: '' },
    ras,
  )
  const framer = Cec.createReplyFramer(encodeP8Transmit(ras))
  t.same(framer.push(unanswered), [unanswered], 'the reply framer ends the exchange on the transmit result and the no-answer message')
  t.same(parseCecReply(unanswered), { ok: true, kind: 'other' })
  t.same(cecCtlArgs('/dev/cec0', { initiator: 4, destination: 0, opcode: 0xa0, operands: Uint8Array.of(1, 0xff) }), [
    '-d',
    '/dev/cec0',
    '--to',
    '0',
    '--custom-command',
    'cmd=0xa0,payload=0x01:0xff',
  ])
})
