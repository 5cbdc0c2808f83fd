// Operating hours on a real device: a real agent switches a simulated Samsung MDC panel (over
// a socat pseudo-terminal, or the simulator's TCP port when socat is missing) at the hours'
// local times on its own clock. Hours that end a minute from now power the panel off at that
// minute; the agent restarts with the cloud stopped and powers it back on at the next "on".
// Time runs on the agents' injected clocks. A panel that ignores power commands (a simulator
// fault) is reported not obeying after the retries: alert, event and drift follow.
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { startCloud } from '../cloud.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'
import { FakeTime, captureLog, tempDir, until, type LogCapture } from '../helpers.js'
import { startPanelAgent, startPanelSim } from './panelRig.js'
import { servicesOf } from '../../../cloud/src/app.js'

const MINUTE = 60_000

/**
 * The agent's three power retries (10, 30 and 60 s apart on its clock), each let due only once
 * the attempt before it has sent its command, read the panel back over the serial link and
 * scheduled the next: its log says so ("did not follow", with the wait). Advancing the clock
 * before that line would pass a retry's time before its timer exists.
 */
async function retriesSpent(t: Test, time: FakeTime, logs: LogCapture): Promise<void> {
  const refusals = () => logs.lines.filter((l) => l.msg === 'the panel did not follow its operating hours')
  for (const [i, wait] of [10_000, 30_000, 60_000].entries()) {
    const seen = await until(HANG_GUARD_MS, () => (refusals().length > i ? refusals() : undefined))
    if (!seen) throw new Error(`the agent's power attempt ${i + 1} never logged "did not follow": ${JSON.stringify(logs.lines.slice(-5))}`)
    t.match(seen[i], { retryInMs: wait }, `attempt ${i + 1} refused: the next in ${wait / 1000} s`)
    await time.advanceSettling(wait)
  }
}
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16)

async function rig(t: Test, protocol: 'samsung-mdc' | 'cec' = 'samsung-mdc') {
  const cloud = await startCloud(t)
  const { sim, panelPath } = await startPanelSim(t, { protocol, state: { power: 'on' } })
  // Minutes aligned: the hours are whole minutes of the agent's clock.
  const start = Math.ceil(Date.now() / MINUTE) * MINUTE + 10_000
  const time = new FakeTime(start)
  const dataDir = tempDir(t)
  const logs = captureLog(time.clock)
  const agent = startPanelAgent(t, cloud, dataDir, panelPath, time, logs, protocol === 'cec' ? 'cec' : 'other')
  const code = once(agent, 'code')
  await agent.start()
  const [registration] = await code
  const connected = once(agent, 'connected')
  const screenId = await cloud.pair(registration.pairingCode, 'Window')
  await connected
  t.equal((await cloud.request('PATCH', `/v1/screens/${screenId}/panel`, { protocol, setId: 1, pollSeconds: 0 })).status, 200)
  return { cloud, sim, panelPath, time, dataDir, agent, screenId, start, logs }
}

t.test('hours that end a minute from now switch the panel off then; after a restart with the cloud stopped, on again at the next "on"', async (t) => {
  const { cloud, sim, panelPath, time, dataDir, agent, screenId, start } = await rig(t)
  const off = start - 10_000 + MINUTE // the next whole minute
  const on = off + 2 * MINUTE
  // Every day from `on` to `off` the next day: on now, off in a minute, on two minutes later.
  const hours = { weekly: [{ days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], on: hhmm(on), off: hhmm(off) }], exceptions: [] }
  t.equal((await cloud.request('PUT', `/v1/screens/${screenId}/operating-hours`, hours)).status, 200)
  const reported = await cloud.waitFor(`svc/v1/screens/${screenId}/reported`, (r) => (r.panel as { intended?: string } | undefined)?.intended === 'on')
  t.match(reported.panel, { power: 'on', intended: 'on', obeying: true }, 'on within the hours, read back')

  await time.advanceSettling(off - time.nowMs)
  t.ok(await until(5 * 60_000, () => (sim.panel.model.state.power === 'off' ? true : undefined)), 'off at the minute the hours end')
  await cloud.waitFor(
    `svc/v1/screens/${screenId}/reported`,
    (r) => (r.panel as { intended?: string; obeying?: boolean } | undefined)?.obeying === true && (r.panel as { intended?: string }).intended === 'off',
  )

  // The cloud goes away; the agent restarts and keeps the hours on its own.
  await cloud.close()
  await agent.stop()
  const later = new FakeTime(off + 30_000)
  const again = startPanelAgent(t, cloud, dataDir, panelPath, later)
  await again.start()
  t.equal(sim.panel.model.state.power, 'off', 'still off after the restart')
  await later.advanceSettling(on - later.nowMs)
  t.ok(await until(5 * 60_000, () => (sim.panel.model.state.power === 'on' ? true : undefined)), 'on again at the next "on", with no cloud')
})

t.test('a panel that ignores power commands is reported not obeying after the retries: alert panel-not-obeying, screen.panel_mismatch, drift', async (t) => {
  const { cloud, sim, time, screenId, logs } = await rig(t)
  sim.panel.model.setPower('off')
  sim.panel.setFaults({ ignorePower: true })
  const rule = await cloud.request('POST', '/v1/alert-rules', { name: 'Panels', config: { codes: ['panel-not-obeying'] } })
  t.equal(rule.status, 201)
  const always = { weekly: [{ days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], on: '00:00', off: '24:00' }], exceptions: [] }
  t.equal((await cloud.request('PUT', `/v1/screens/${screenId}/operating-hours`, always)).status, 200)
  const panelOf = async () =>
    ((await (await cloud.request('GET', `/v1/screens/${screenId}`)).json()) as { data: { reported: { panel?: Record<string, unknown> } | null } }).data.reported
      ?.panel
  t.ok(await until(5 * 60_000, async () => ((await panelOf())?.intended === 'on' ? true : undefined)), 'told on')
  t.notOk((await panelOf())?.obeying === false, 'not yet declared disobedient: retries are due')
  await retriesSpent(t, time, logs)
  t.ok(await until(5 * 60_000, async () => ((await panelOf())?.obeying === false ? true : undefined)), 'obeying: false after three retries')
  t.match(await panelOf(), { power: 'off', intended: 'on', obeying: false })
  t.equal(sim.panel.model.state.power, 'off', 'the panel never obeyed')

  const open = await until(5 * 60_000, async () => {
    const events = ((await (await cloud.request('GET', '/v1/alert-events?state=open&code=panel-not-obeying')).json()) as { data: unknown[] }).data
    return events.length ? events : undefined
  })
  t.match(open, [{ code: 'panel-not-obeying', screenId, message: /should be on by its operating hours but reads off/ }])
  const drift = ((await (await cloud.request('GET', `/v1/screens/${screenId}`)).json()) as { data: { drift: { items: unknown[] } } }).data.drift
  t.match(drift.items, [{ field: 'panel.power', desired: 'on', reported: 'off' }])
  const s = servicesOf(cloud.running.app)
  const mismatch = await s.db.all<{ data: string }>("SELECT data FROM events_outbox WHERE event = 'screen.panel_mismatch'")
  t.match(
    mismatch.map((m) => JSON.parse(m.data)),
    [{ screenId, intended: 'on', power: 'off' }],
  )

  // Cleared: the next retry gets through; obeying again closes the alert.
  sim.panel.clearFaults()
  await time.advanceSettling(60_000)
  t.ok(await until(5 * 60_000, async () => ((await panelOf())?.obeying === true ? true : undefined)), 'obeying again')
  t.equal(sim.panel.model.state.power, 'on')
  t.ok(
    await until(5 * 60_000, async () =>
      ((await (await cloud.request('GET', '/v1/alert-events?state=open&code=panel-not-obeying')).json()) as { data: unknown[] }).data.length === 0
        ? true
        : undefined,
    ),
    'the alert closed',
  )
})

t.test('a cast during the off hours powers the panel on; cleared, the panel goes off again', async (t) => {
  const { cloud, sim, screenId, start } = await rig(t)
  const later = start - 10_000 + 10 * MINUTE
  // On for one minute, ten minutes from now: off now.
  const hours = { weekly: [{ days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], on: hhmm(later), off: hhmm(later + MINUTE) }], exceptions: [] }
  t.equal((await cloud.request('PUT', `/v1/screens/${screenId}/operating-hours`, hours)).status, 200)
  t.ok(await until(5 * 60_000, () => (sim.panel.model.state.power === 'off' ? true : undefined)), 'off: outside the hours')
  const app = ((await (await cloud.request('POST', '/v1/app-instances', { name: 'Clock', appKey: 'clock', config: {} })).json()) as { data: { id: string } })
    .data
  const made = await cloud.request('POST', '/v1/casts', { contentKind: 'app', contentId: app.id, scopeKind: 'screens', screenIds: [screenId] })
  t.equal(made.status, 201, 'cast made')
  const cast = ((await made.json()) as { data: { id: string } }).data
  t.ok(await until(5 * 60_000, () => (sim.panel.model.state.power === 'on' ? true : undefined)), 'the cast powers the panel on during the off hours')
  t.equal((await cloud.request('POST', `/v1/casts/${cast.id}/clear`)).status, 200)
  t.ok(await until(5 * 60_000, () => (sim.panel.model.state.power === 'off' ? true : undefined)), 'cleared: off again')
})

// HDMI-CEC: a consumer TV through a Pulse-Eight adapter (simulated, set id 1 = the player on
// HDMI 1) gets the same hours, read-back and alert as an RS232 panel.
t.test('a CEC TV: the hours put it in standby and wake it on the injected clock; a TV that ignores standby is panel-not-obeying', async (t) => {
  const { cloud, sim, time, screenId, start } = await rig(t, 'cec')
  const off = start - 10_000 + MINUTE
  const on = off + 2 * MINUTE
  const hours = { weekly: [{ days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], on: hhmm(on), off: hhmm(off) }], exceptions: [] }
  t.equal((await cloud.request('PUT', `/v1/screens/${screenId}/operating-hours`, hours)).status, 200)
  const reported = await cloud.waitFor(`svc/v1/screens/${screenId}/reported`, (r) => (r.panel as { obeying?: boolean } | undefined)?.obeying === true)
  t.match(reported.panel, { power: 'on', intended: 'on', obeying: true }, 'on within the hours, read back over CEC')
  t.equal(sim.panel.model.state.input, 'hdmi1', 'Active Source: the TV shows the player')

  await time.advanceSettling(off - time.nowMs)
  t.ok(await until(5 * 60_000, () => (sim.panel.model.state.power === 'standby' ? true : undefined)), 'Standby at the minute the hours end')
  await cloud.waitFor(`svc/v1/screens/${screenId}/reported`, (r) => {
    const p = r.panel as { intended?: string; obeying?: boolean; power?: string } | undefined
    return p?.intended === 'off' && p.obeying === true && p.power === 'off'
  })
  await time.advanceSettling(on - time.nowMs)
  t.ok(await until(5 * 60_000, () => (sim.panel.model.state.power === 'on' ? true : undefined)), 'Image View On at the next "on"')
})

t.test('a CEC TV that acknowledges Standby and stays on is reported not obeying: alert panel-not-obeying', async (t) => {
  const { cloud, sim, time, screenId, start, logs } = await rig(t, 'cec')
  sim.panel.setFaults({ ignoreStandby: true })
  const rule = await cloud.request('POST', '/v1/alert-rules', { name: 'Panels', config: { codes: ['panel-not-obeying'] } })
  t.equal(rule.status, 201)
  // On for one minute, ten minutes from now: off now.
  const later = start - 10_000 + 10 * MINUTE
  const never = { weekly: [{ days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], on: hhmm(later), off: hhmm(later + MINUTE) }], exceptions: [] }
  const put = await cloud.request('PUT', `/v1/screens/${screenId}/operating-hours`, never)
  t.equal(put.status, 200, await put.text())
  await cloud.waitFor(`svc/v1/screens/${screenId}/reported`, (r) => (r.panel as { intended?: string } | undefined)?.intended === 'off')
  await retriesSpent(t, time, logs)
  const notObeying = await cloud.waitFor(`svc/v1/screens/${screenId}/reported`, (r) => (r.panel as { obeying?: boolean } | undefined)?.obeying === false)
  t.match(notObeying.panel, { power: 'on', intended: 'off', obeying: false })
  t.equal(sim.panel.model.state.power, 'on', 'the TV never went to standby')
  const open = await until(5 * 60_000, async () => {
    const events = ((await (await cloud.request('GET', '/v1/alert-events?state=open&code=panel-not-obeying')).json()) as { data: unknown[] }).data
    return events.length ? events : undefined
  })
  t.match(open, [{ code: 'panel-not-obeying', screenId }])
})

t.test('a TV without CEC is reported as such, not off, and the log tells the installer what to check; CEC back, the hours switch it on', async (t) => {
  const { cloud, sim, time, screenId, logs } = await rig(t, 'cec')
  sim.panel.model.setPower('standby')
  sim.panel.setFaults({ noCec: true })
  const always = { weekly: [{ days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], on: '00:00', off: '24:00' }], exceptions: [] }
  t.equal((await cloud.request('PUT', `/v1/screens/${screenId}/operating-hours`, always)).status, 200)
  const reported = await cloud.waitFor(`svc/v1/screens/${screenId}/reported`, (r) => (r.panel as { problem?: string } | undefined)?.problem === 'no-cec')
  t.match(reported.panel, { power: 'unknown', problem: 'no-cec', intended: 'on' }, 'unknown with the reason, never "off"')
  const said = await logs.waitFor((l) => l.part === 'panel' && l.problem === 'no-cec')
  t.match(said, { level: 'info', setId: 1, msg: /^the TV answers no CEC: .*not off.*CEC setting on/ }, 'what to check, in the log')
  t.equal(sim.panel.model.state.power, 'standby', 'nothing reached the TV')

  await logs.waitFor((l) => l.msg === 'the panel did not follow its operating hours' && l.retryInMs === 10_000)
  sim.panel.clearFaults()
  await time.advanceSettling(10_000)
  t.ok(await until(5 * 60_000, () => (sim.panel.model.state.power === 'on' ? true : undefined)), 'a retry of the hours wakes the TV once CEC answers')
  await logs.waitFor((l) => l.part === 'panel' && l.msg === 'the TV answers CEC again')
  await cloud.waitFor(`svc/v1/screens/${screenId}/reported`, (r) => {
    const p = r.panel as { power?: string; problem?: string; obeying?: boolean } | undefined
    return p?.power === 'on' && p.problem === undefined && p.obeying === true
  })
  t.equal(logs.lines.filter((l) => l.part === 'panel' && l.problem === 'no-cec').length, 1, 'said once, not at every reading')
})
