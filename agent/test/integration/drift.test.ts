// Drift on a real device: a real agent drives a simulated Samsung MDC panel (over a socat
// pseudo-terminal, or the simulator's TCP port when socat is missing). The panel is powered
// on through the API; the screen is in sync. Someone switches the panel off by hand on the
// simulator: the agent's poll reads it, and the screen drifts (panel.power: told on, reports
// off), listed by GET /v1/screens?drift=drifting. Switched back on, it is in sync again.
import t from 'tap'
import { once } from 'node:events'
import { startCloud } from '../cloud.js'
import { tempDir, until } from '../helpers.js'
import { startPanelAgent, startPanelSim } from './panelRig.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

interface Drift {
  state: string
  since: string | null
  items: { field: string; desired: unknown; reported: unknown; since: string }[]
}

t.test('a panel switched off by hand on the simulator makes its screen drift; switched back on, it is in sync', async (t) => {
  const cloud = await startCloud(t)
  const { sim, panelPath } = await startPanelSim(t, { protocol: 'samsung-mdc', state: { power: 'off' } })
  const agent = startPanelAgent(t, cloud, tempDir(t), panelPath)
  const code = once(agent, 'code')
  await agent.start()
  const [registration] = await code
  const connected = once(agent, 'connected')
  const screenId = await cloud.pair(registration.pairingCode, 'Window')
  await connected

  const drift = async (): Promise<Drift> => ((await (await cloud.request('GET', `/v1/screens/${screenId}`)).json()) as { data: { drift: Drift } }).data.drift
  const driftingIds = async (): Promise<string[]> =>
    ((await (await cloud.request('GET', '/v1/screens?drift=drifting')).json()) as { data: { id: string }[] }).data.map((s) => s.id)
  // The list's drift filter reads what the device link has written; it follows the screen's view a moment later on a busy machine.
  const listedAs = (want: string[]) =>
    until(5 * 60_000, async () => {
      const ids = await driftingIds()
      return ids.join() === want.join() ? ids : undefined
    })
  // The view that matched, not a second read: a reading still on its way (the poll's, the job's read-back) may land between two reads.
  const waitDrift = (state: string, ms = HANG_GUARD_MS) =>
    until(ms, async () => {
      const d = await drift()
      return d.state === state ? d : undefined
    })

  // Polled every second, so a change by hand is read back soon.
  t.equal((await cloud.request('PATCH', `/v1/screens/${screenId}/panel`, { protocol: 'samsung-mdc', setId: 1, pollSeconds: 1 })).status, 200)
  // Power on through the API, with the preset's bytes (MDC power on, set id 1).
  const preset = (
    (await (await cloud.request('GET', '/v1/serial-presets?protocol=samsung-mdc')).json()) as {
      data: { commands: { key: string; value: string; encoding: string }[] }[]
    }
  ).data[0]!
  const on = preset.commands.find((c) => c.key === 'power.on')!
  const job = (
    (await (await cloud.request('POST', `/v1/screens/${screenId}/serial`, { value: on.value, encoding: on.encoding })).json()) as { data: { id: string } }
  ).data
  const done = await until(5 * 60_000, async () => {
    const j = ((await (await cloud.request('GET', `/v1/serial-jobs/${job.id}`)).json()) as { data: { status: string } }).data
    return j.status === 'queued' || j.status === 'sent' ? undefined : j
  })
  t.equal(done?.status, 'ok')
  t.equal(sim.panel.model.state.power, 'on')

  const inSync = await until(5 * 60_000, async () => {
    const d = await drift()
    return d.state === 'in_sync' && d.items.length === 0 ? d : undefined
  })
  t.ok(inSync, 'powered on as told: in sync')
  t.same(await listedAs([]), [])

  // By hand: the panel goes dark though it was told to be on.
  sim.panel.model.setPower('off')
  const drifting = await waitDrift('drifting')
  t.ok(drifting, 'the screen drifts once the agent reads the panel back')
  t.match(drifting?.items, [{ field: 'panel.power', desired: 'on', reported: 'off' }])
  t.same(await listedAs([screenId]), [screenId], 'GET /v1/screens?drift=drifting lists it')

  sim.panel.model.setPower('on')
  t.ok(await waitDrift('in_sync'), 'switched back on: in sync again')
  t.same(await listedAs([]), [])
})
