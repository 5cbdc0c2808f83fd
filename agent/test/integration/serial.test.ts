// Serial control end to end over real interfaces: the API queues a serial job, the cloud
// delivers it over MQTT, a real agent writes it to a simulated Samsung MDC panel over a
// socat pseudo-terminal (over the simulator's TCP port, a serial-over-IP gateway, when
// socat is missing), and the reply comes back to the API. The screen's panel profile
// reaches the agent in its desired state, and the agent's power polling shows up in the
// screen's reported state. A job queued while the agent is away completes when it returns.
import t from 'tap'
import { once } from 'node:events'
import { tempDir, until } from '../helpers.js'
import { startCloud, type TestCloud } from '../cloud.js'
import { startPanelAgent, startPanelSim } from './panelRig.js'

async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T
}

async function waitJob(cloud: TestCloud, id: string): Promise<Record<string, unknown>> {
  const done = await until(5 * 60_000, async () => {
    const job = (await json<{ data: Record<string, unknown> }>(await cloud.request('GET', `/v1/serial-jobs/${id}`))).data
    return ['ok', 'nak', 'timeout', 'failed'].includes(String(job.status)) ? job : undefined
  })
  if (!done) throw new Error(`serial job ${id} did not complete`)
  return done
}

t.test('API → MQTT → agent → panel over a pty and back; offline jobs complete on return', async (t) => {
  const cloud = await startCloud(t)
  const { sim, panelPath } = await startPanelSim(t, { protocol: 'samsung-mdc', state: { power: 'off' } })
  t.ok(panelPath, `the simulator listens at ${panelPath}`)

  const dataDir = tempDir(t)
  let agent = startPanelAgent(t, cloud, dataDir, panelPath)
  const code = once(agent, 'code')
  await agent.start()
  const [registration] = await code
  const connected = once(agent, 'connected')
  const screenId = await cloud.pair(registration.pairingCode, 'Window')
  await connected

  // The panel profile travels in the desired state; the agent starts polling power.
  const profile = await cloud.request('PATCH', `/v1/screens/${screenId}/panel`, { protocol: 'samsung-mdc', setId: 1, pollSeconds: 600 })
  t.equal(profile.status, 200)
  await cloud.waitFor(`svc/v1/screens/${screenId}/desired`, (d) => (d.panel as { protocol?: string } | null)?.protocol === 'samsung-mdc')
  await cloud.waitFor(`svc/v1/screens/${screenId}/reported`, (r) => (r.panel as { power?: string } | undefined)?.power === 'off')

  // Power on through the API: MDC `AA 11 01 01 01 14`, ACK `AA FF 01 03 41 11 01 56`.
  const queued = await cloud.request('POST', `/v1/screens/${screenId}/serial`, { value: 'AA 11 01 01 01 14', encoding: 'hex' })
  t.equal(queued.status, 202)
  const job = (await json<{ data: { id: string; bytesHex: string } }>(queued)).data
  t.match(job.id, /^sjob_/)
  const done = await waitJob(cloud, job.id)
  t.equal(done.status, 'ok')
  t.equal(String(done.replyHex).replace(/ /g, '').toUpperCase(), 'AAFF010341110156')
  t.equal(sim.panel.model.state.power, 'on', 'the panel did it')
  // Polls are 10 minutes apart here: only the read-back after the job can explain a fresh state.
  const panelState = async () =>
    (await json<{ data: { reported?: { panel?: { power?: string; input?: string } } } }>(await cloud.request('GET', `/v1/screens/${screenId}`))).data.reported
      ?.panel
  // Waited for with a hang guard of 5 minutes, well short of the next poll.
  const reportedOn = await until(5 * 60_000, async () => ((await panelState())?.power === 'on' ? true : undefined))
  t.ok(reportedOn, 'the power state read back after the job reaches the screen in the API')
  t.equal((await panelState())?.input, 'hdmi1', 'the input is reported too (MDC can read it)')

  // Proof of display: a play that starts now carries the panel's power as the agent last read
  // it back (on, since the job above), and reaches the API with it.
  const play = {
    screenId,
    source: 'assignment',
    contentKind: 'media',
    contentId: 'med_probe',
    castId: null,
    emergencyId: null,
    itemKind: 'media',
    itemId: 'med_probe',
    zone: null,
  }
  agent.playLog.start('probe', play)
  agent.playLog.end('probe')
  await agent.playLog.flush()
  t.equal((await agent.playLog.all()).at(-1)?.panelPower, 'on', 'the play log stamps the power read back')
  const stored = await until(5 * 60_000, async () => {
    const plays = (await json<{ data: { itemId: string; panelPower: string }[] }>(await cloud.request('GET', `/v1/screens/${screenId}/play-log`))).data
    return plays.find((p) => p.itemId === 'med_probe')
  })
  t.equal(stored?.panelPower, 'on', 'and the cloud keeps it with the play')

  // An input change shows up the same way.
  const hdmi2 = (
    await json<{ data: { id: string } }>(await cloud.request('POST', `/v1/screens/${screenId}/serial`, { value: 'AA 14 01 01 23 39', encoding: 'hex' }))
  ).data
  t.equal((await waitJob(cloud, hdmi2.id)).status, 'ok')
  t.ok(await until(5 * 60_000, async () => ((await panelState())?.input === 'hdmi2' ? true : undefined)), 'reported.panel.input follows the input job')

  // The agent goes away; a power-off job is queued; it completes when the agent returns.
  await agent.stop()
  const offQueued = await cloud.request('POST', `/v1/screens/${screenId}/serial`, { value: 'AA 11 01 01 00 13', encoding: 'hex' })
  const offJob = (await json<{ data: { id: string; status: string } }>(offQueued)).data
  t.equal(offJob.status, 'queued')
  agent = startPanelAgent(t, cloud, dataDir, panelPath)
  await agent.start()
  const off = await waitJob(cloud, offJob.id)
  t.equal(off.status, 'ok')
  t.equal(sim.panel.model.state.power, 'off')
})
