// AlertEvaluator: events open once per rule and screen and close on recovery with
// detail.kind; connection-lost waits for thresholds.minutes on the ManualClock; scope by
// location; display-off and storage-critical; the events list and its filters.
import { servicesOf } from '../../src/app.js'
import t, { type Test } from 'tap'
import { build, type Harness } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'

async function setup(t: Test) {
  const h = await build(t)
  const { apiKey, workspaceId } = await h.workspace()
  const mk = async (body: Record<string, unknown>) => {
    const res = await h.req('POST', '/v1/alert-rules', apiKey, body)
    if (res.statusCode !== 201) throw new Error(res.body)
    return res.json().data as { id: string }
  }
  return { h, apiKey, workspaceId, mk }
}
const events = async (h: Harness, key: string, q = '') => (await h.req('GET', `/v1/alert-events${q}`, key)).json()

t.test('connection-lost: opens after the threshold, once; closes on recovery', async (t) => {
  const { h, apiKey, workspaceId, mk } = await setup(t)
  const r = await mk({ name: 'Offline 10 min', config: { codes: ['connection-lost'], thresholds: { minutes: 10 } } })
  const ev = servicesOf(h.app).alerts
  const screen = { id: 'scr_lobby', name: 'Lobby', nodeId: null }
  await ev.screenStatusChanged(workspaceId, screen, 'online')
  await ev.screenStatusChanged(workspaceId, screen, 'offline')
  h.clock.advance(9 * 60_000)
  await servicesOf(h.app).alertWorker.runOnce()
  t.same((await events(h, apiKey)).data, [], 'not before the threshold')
  h.clock.advance(60_000)
  await servicesOf(h.app).alertWorker.runOnce()
  await servicesOf(h.app).alertWorker.runOnce()
  const open = (await events(h, apiKey)).data
  t.equal(open.length, 1, 'opened once')
  const e = open[0]
  t.match(e.id, /^ale_/)
  t.equal(e.ruleId, r.id)
  t.equal(e.code, 'connection-lost')
  t.equal(e.severity, 'critical')
  t.equal(e.screenId, 'scr_lobby')
  t.equal(e.screenName, 'Lobby')
  t.match(e.message, /offline for 10 minute/)
  t.ok(e.nextAction)
  t.equal(e.closedAt, null)
  t.equal(e.openedAt, h.clock.now().toISOString())
  h.clock.advance(5 * 60_000)
  await ev.screenStatusChanged(workspaceId, screen, 'online')
  const closed = (await h.req('GET', `/v1/alert-events/${e.id}`, apiKey)).json().data
  t.equal(closed.closedAt, h.clock.now().toISOString())
  t.equal(closed.detail.kind, 'recovery')
  t.equal(closed.detail.offlineMinutes, 15)
  t.equal((await events(h, apiKey, '?state=open')).data.length, 0)
  t.equal((await events(h, apiKey, '?state=closed')).data.length, 1)
  // A short blip stays below the threshold: no event.
  await ev.screenStatusChanged(workspaceId, screen, 'offline')
  h.clock.advance(60_000)
  await servicesOf(h.app).alertWorker.runOnce()
  await ev.screenStatusChanged(workspaceId, screen, 'online')
  t.equal((await events(h, apiKey)).data.length, 1)
})

t.test('connection-lost: a screen that flapped closes as network-unstable; threshold 0 opens at once', async (t) => {
  const { h, apiKey, workspaceId, mk } = await setup(t)
  await mk({ name: 'Any outage', config: { codes: ['connection-lost'], thresholds: { minutes: 0 } } })
  const ev = servicesOf(h.app).alerts
  const screen = { id: 'scr_door', name: 'Door', nodeId: null }
  for (let i = 0; i < 3; i++) {
    await ev.screenStatusChanged(workspaceId, screen, 'offline')
    h.clock.advance(2 * 60_000)
    await ev.screenStatusChanged(workspaceId, screen, 'online')
    h.clock.advance(60_000)
  }
  const list = (await events(h, apiKey)).data
  t.equal(list.length, 3, 'one event per outage')
  t.same(
    list.map((e: { detail: { kind: string } }) => e.detail.kind),
    ['network-unstable', 'recovery', 'recovery'],
    'the third outage within the hour is flapping',
  )
  t.equal(list[0].detail.offlineTimesLastHour, 3)
})

t.test('scope: location subtree and single screen; rule home node', async (t) => {
  const { h, apiKey, workspaceId, mk } = await setup(t)
  const region = (await h.req('POST', '/v1/nodes', apiKey, { name: 'North', kind: 'org_unit' })).json().data
  const store = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store 1', kind: 'location', parentId: region.id })).json().data
  const elsewhere = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store 2', kind: 'location' })).json().data
  const byRegion = await mk({ name: 'North', config: { codes: ['display-off'], scopeKind: 'org_unit', scopeId: region.id } })
  // A screen scope names a real screen of the workspace.
  const b = (await pairScreen(h, apiKey, 'B', elsewhere.id)).screenId
  const byScreen = await mk({ name: 'One screen', config: { codes: ['display-off'], scopeKind: 'screen', scopeId: b } })
  const ev = servicesOf(h.app).alerts
  await ev.panelPowerReported(workspaceId, { id: 'scr_a', name: 'A', nodeId: store.id }, 'off', true)
  await ev.panelPowerReported(workspaceId, { id: b, name: 'B', nodeId: elsewhere.id }, 'off', true)
  await ev.panelPowerReported(workspaceId, { id: 'scr_c', name: 'C', nodeId: elsewhere.id }, 'off', true)
  const list = (await events(h, apiKey)).data
  t.same(list.map((e: { screenId: string; ruleId: string }) => `${e.screenId}:${e.ruleId}`).sort(), [`scr_a:${byRegion.id}`, `${b}:${byScreen.id}`].sort())
  t.equal((await events(h, apiKey, '?screenId=scr_a')).data.length, 1)
  t.equal((await events(h, apiKey, '?code=display-off')).data.length, 2)
  t.equal((await events(h, apiKey, '?code=storage-critical')).data.length, 0)
  t.equal((await events(h, apiKey, '?state=bogus')).data.length, 2, 'another state value is ignored')
})

t.test('display-off opens while content should play and closes with detail.kind display-off', async (t) => {
  const { h, apiKey, workspaceId, mk } = await setup(t)
  await mk({ name: 'Panel', config: { codes: ['display-off'] } })
  const ev = servicesOf(h.app).alerts
  const s = { id: 'scr_p', name: 'Panel screen', nodeId: null }
  await ev.panelPowerReported(workspaceId, s, 'off', false)
  t.equal((await events(h, apiKey)).data.length, 0, 'off outside playing hours is fine')
  await ev.panelPowerReported(workspaceId, s, 'standby', true)
  await ev.panelPowerReported(workspaceId, s, 'off', true)
  const open = (await events(h, apiKey)).data
  t.equal(open.length, 1)
  t.equal(open[0].severity, 'warning')
  t.same(open[0].detail.kind, 'display-off')
  t.equal(open[0].detail.power, 'standby')
  h.clock.advance(60_000)
  await ev.panelPowerReported(workspaceId, s, 'on', true)
  const closed = (await events(h, apiKey)).data[0]
  t.ok(closed.closedAt)
  t.equal(closed.detail.kind, 'display-off')
  t.equal(closed.detail.resolvedBy, 'power-on')
})

t.test('storage-critical with thresholds.percent; rule switched off closes as outage-history', async (t) => {
  const { h, apiKey, workspaceId, mk } = await setup(t)
  const r = await mk({ name: 'Disk', config: { codes: ['storage-critical'], thresholds: { percent: 80 } } })
  const ev = servicesOf(h.app).alerts
  const s = { id: 'scr_s', name: 'Storage screen', nodeId: null }
  await ev.storageReported(workspaceId, s, 70, 100)
  t.equal((await events(h, apiKey)).data.length, 0)
  await ev.storageReported(workspaceId, s, 85, 100)
  const open = (await events(h, apiKey)).data[0]
  t.match(open.message, /85% full/)
  await ev.storageReported(workspaceId, s, 50, 100)
  const closed = (await events(h, apiKey)).data[0]
  t.equal(closed.detail.kind, 'recovery')
  t.equal(closed.detail.usedPercent, 50)
  await ev.storageReported(workspaceId, s, 95, 100)
  await h.req('PATCH', `/v1/alert-rules/${r.id}`, apiKey, { enabled: false })
  const hist = (await events(h, apiKey)).data[0]
  t.ok(hist.closedAt)
  t.equal(hist.detail.kind, 'outage-history')
  await ev.storageReported(workspaceId, s, 99, 100)
  t.equal((await events(h, apiKey, '?state=open')).data.length, 0, 'a switched-off rule does not fire')
})

t.test('screen removed: open events close as history and show the name kept', async (t) => {
  const { h, apiKey, workspaceId, mk } = await setup(t)
  await mk({ name: 'Panel', config: { codes: ['display-off'] } })
  await servicesOf(h.app).alerts.panelPowerReported(workspaceId, { id: 'scr_gone', name: 'Gone', nodeId: null }, 'off', true)
  await servicesOf(h.app).alerts.screenRemoved(workspaceId, 'scr_gone')
  const e = (await events(h, apiKey)).data[0]
  t.equal(e.detail.kind, 'outage-history')
  t.equal(e.screenName, 'Gone')
  const other = await h.workspace('B')
  t.same((await events(h, other.apiKey)).data, [], 'another workspace sees nothing')
  t.equal((await h.req('GET', `/v1/alert-events/${e.id}`, other.apiKey)).statusCode, 404)
})

t.test('an unreadable panel (unknown) changes nothing; a report without a name uses the last one seen', async (t) => {
  const { h, apiKey, workspaceId, mk } = await setup(t)
  await mk({ name: 'Panel', config: { codes: ['display-off', 'storage-critical'] } })
  const ev = servicesOf(h.app).alerts
  await ev.panelPowerReported(workspaceId, { id: 'scr_u', nodeId: null }, 'unknown', true)
  t.equal((await events(h, apiKey)).data.length, 0)
  await ev.panelPowerReported(workspaceId, { id: 'scr_u', nodeId: null }, 'off', true)
  t.equal((await events(h, apiKey)).data[0].screenName, '(unknown screen)')
  await ev.screenStatusChanged(workspaceId, { id: 'scr_n', name: 'Named', nodeId: null }, 'online')
  await ev.storageReported(workspaceId, { id: 'scr_n', nodeId: null }, 95, 100)
  const e = (await events(h, apiKey, '?screenId=scr_n')).data[0]
  t.equal(e.screenName, 'Named')
  await ev.panelPowerReported(workspaceId, { id: 'scr_u', nodeId: null }, 'unknown', true)
  t.equal((await events(h, apiKey, '?screenId=scr_u&state=open')).data.length, 1, 'unknown does not close either')
})
