// Groups end to end, with real MQTT devices: a cast to a group changes exactly its members'
// desired state; an active emergency aimed at a group (or a location) reaches a screen that
// comes to match it (tagged, moved) and leaves one that stops matching.
import t from 'tap'
import { servicesOf } from '../../src/app.js'
import { until } from '../fixtures/processes.js'
import { connectDevice, droppedAtBroker, startCloud } from './link.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

/** A hang guard: what was awaited is named in the rejection. */
const GUARD = HANG_GUARD_MS

t.test('a cast to a group changes exactly the members; a group emergency follows the tags and a location emergency follows a move', async (t) => {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_promo' }).add(c.workspaceId, { kind: 'media', id: 'med_fire' })
  const [a, b, other] = [await c.pair('A'), await c.pair('B'), await c.pair('C')]
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const [da, db, dc] = [await connectDevice(t, url, a), await connectDevice(t, url, b), await connectDevice(t, url, other)]
  for (const d of [da, db, dc]) await d.next(() => true, GUARD)
  t.equal((await c.call('POST', '/v1/screens/bulk-tag', { screenIds: [a.screenId, b.screenId], add: ['Lobby'] })).status, 200)
  const group = (await c.call('POST', '/v1/groups', { name: 'Lobby', kind: 'dynamic', rule: { all: [{ tag: 'lobby' }] } })).body.data
  t.equal(group.memberCount, 2)

  // The cast takes the members only.
  const before = dc.latest!.version
  let res = await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_promo', scopeKind: 'group', groupId: group.id })
  t.equal(res.status, 201, JSON.stringify(res.body))
  t.match(res.body.data, { scopeKind: 'group', groupId: group.id, screenCount: 2 })
  for (const d of [da, db]) await d.next((s) => s.casts.length === 1, GUARD)
  const screenC = (await c.call('GET', `/v1/screens/${other.screenId}`)).body.data
  t.equal(screenC.desiredVersion, before, "the non-member's desired state did not change")
  t.same(dc.latest!.casts, [])
  res = await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_promo', scopeKind: 'group', groupId: 'grp_nope' })
  t.equal(res.status, 422)
  res = await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_promo', scopeKind: 'node', groupId: group.id })
  t.equal(res.status, 422, 'groupId only with scopeKind group')

  // An emergency on the group follows the tags while it is active.
  res = await c.call('POST', '/v1/emergencies', { contentKind: 'media', contentId: 'med_fire', scopeKind: 'group', groupId: group.id, message: 'Leave' })
  t.equal(res.status, 201, JSON.stringify(res.body))
  const emg = res.body.data
  t.match(emg, { scopeKind: 'group', groupId: group.id, screenCount: 2 })
  for (const d of [da, db]) await d.next((s) => s.emergency?.id === emg.id, GUARD)
  t.equal(dc.latest!.emergency, null)
  const cBefore = dc.latest!.version
  t.equal((await c.call('PATCH', `/v1/screens/${other.screenId}`, { tags: ['lobby'] })).status, 200)
  await dc.next((s) => s.version > cBefore && s.emergency?.id === emg.id, GUARD)
  const aBefore = da.latest!.version
  t.equal((await c.call('POST', '/v1/screens/bulk-tag', { screenIds: [a.screenId], remove: ['lobby'] })).status, 200)
  const aAfter = await da.next((s) => s.version > aBefore, GUARD)
  t.equal(aAfter.emergency, null, 'a screen that stops matching leaves the emergency')
  t.equal((await c.call('GET', `/v1/emergencies/${emg.id}`)).body.data.screenCount, 2)
  t.equal((await c.call('POST', `/v1/emergencies/${emg.id}/clear`)).status, 200)
  await dc.next((s) => s.emergency === null && s.version > cBefore, GUARD)

  // An emergency on a location reaches a screen moved into it.
  const store = (await c.call('POST', '/v1/nodes', { name: 'Store', kind: 'location' })).body.data.id as string
  t.equal((await c.call('PATCH', `/v1/screens/${b.screenId}`, { nodeId: store })).status, 200)
  const local = (await c.call('POST', '/v1/emergencies', { contentKind: 'media', contentId: 'med_fire', scopeKind: 'node', scopeNodeId: store })).body.data
  t.equal(local.screenCount, 1)
  await db.next((s) => s.emergency?.id === local.id, GUARD)
  const movedBefore = da.latest!.version
  t.equal((await c.call('PATCH', `/v1/screens/${a.screenId}`, { nodeId: store })).status, 200)
  await da.next((s) => s.version > movedBefore && s.emergency?.id === local.id, GUARD)
  t.equal((await c.call('GET', `/v1/emergencies/${local.id}`)).body.data.screenCount, 2)
})

t.test('bulk assign by group assigns the members only', async (t) => {
  const c = await startCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_a' })
  const [a, b] = [await c.pair('A'), await c.pair('B')]
  await c.call('PATCH', `/v1/screens/${a.screenId}`, { tags: ['menu'] })
  const group = (await c.call('POST', '/v1/groups', { name: 'Menus', kind: 'dynamic', rule: { any: [{ tag: 'menu' }] } })).body.data
  const res = await c.call('POST', '/v1/screens/bulk-assign', { groupId: group.id, contentKind: 'media', contentId: 'med_a' })
  t.equal(res.status, 200, JSON.stringify(res.body))
  t.same(res.body.data.screenIds, [a.screenId])
  t.equal((await c.call('GET', `/v1/screens/${b.screenId}`)).body.data.contentId, null)
  t.equal((await c.call('POST', '/v1/screens/bulk-assign', { groupId: group.id, nodeId: null, contentKind: 'media', contentId: 'med_a' })).status, 422)
})

t.test('an alert rule scoped to a group watches its members as membership changes: real devices going offline in and out of the group', async (t) => {
  const c = await startCloud(t)
  const { presence, alertWorker, workspaces, apiKeys } = servicesOf(c.running.app)
  const [a, b] = [await c.pair('In group'), await c.pair('Outside')]
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const [da, db] = [await connectDevice(t, url, a), await connectDevice(t, url, b)]
  for (const d of [da, db]) await d.next(() => true, GUARD)
  t.equal((await c.call('PATCH', `/v1/screens/${a.screenId}`, { tags: ['pilot'] })).status, 200)
  const group = (await c.call('POST', '/v1/groups', { name: 'Pilot', kind: 'dynamic', rule: { all: [{ tag: 'pilot' }] } })).body.data

  // The scope is checked: a group id of no group, or of another workspace's group, is 422.
  const config = (scopeId: unknown) => ({ codes: ['connection-lost'], thresholds: { minutes: 1 }, scopeKind: 'group', scopeId })
  let res = await c.call('POST', '/v1/alert-rules', { name: 'Nope', config: config('grp_nope') })
  t.match(res, { status: 422, body: { error: 'validation_error', message: /config\.scopeId/ } })
  t.equal((await c.call('POST', '/v1/alert-rules', { name: 'No id', config: { codes: ['connection-lost'], scopeKind: 'group' } })).status, 422)
  const other = await workspaces.create('Other', 'us')
  const otherKey = (await apiKeys.createRoot(other.id, other.region, 'Owner', 'all')).secret
  const theirs = await c.call('POST', '/v1/groups', { name: 'Theirs', kind: 'dynamic', rule: { all: [{ tag: 'pilot' }] } }, otherKey)
  t.equal(theirs.status, 201)
  res = await c.call('POST', '/v1/alert-rules', { name: 'Theirs', config: config(theirs.body.data.id) })
  t.equal(res.status, 422, "another workspace's group is not a scope here")
  t.notMatch(JSON.stringify(res.body), /Theirs/, 'and nothing of it is told')

  res = await c.call('POST', '/v1/alert-rules', { name: 'Pilot offline', config: config(group.id) })
  t.equal(res.status, 201, JSON.stringify(res.body))
  t.match(res.body.data.config, { scopeKind: 'group', scopeId: group.id })
  const rule = res.body.data
  res = await c.call('DELETE', `/v1/groups/${group.id}`)
  t.match(res, { status: 409, body: { error: 'conflict', message: /alert rule/ } }, 'a group an alert rule watches is not deleted')

  // Both go offline; only the member opens a connection-lost event.
  for (const d of [da, db]) {
    d.client.stream.destroy()
    t.ok(await droppedAtBroker(c, d.screenId), 'the broker saw the connection close')
  }
  await presence.idle()
  c.clock.advance(presence.offlineAfterMs)
  await presence.sweep()
  await presence.idle()
  c.clock.advance(60_000)
  const openFor = async () =>
    ((await c.call('GET', '/v1/alert-events?state=open&limit=100')).body.data as { screenId: string; ruleId: string }[])
      .filter((e) => e.ruleId === rule.id)
      .map((e) => e.screenId)
      .sort()
  const opened = await until(GUARD, async () => {
    await alertWorker.runOnce()
    const ids = await openFor()
    return ids.length ? ids : undefined
  })
  t.same(opened, [a.screenId], 'the member, not the other offline screen')

  // The other screen joins the group (tagged): the next check opens its event too.
  t.equal((await c.call('POST', '/v1/screens/bulk-tag', { screenIds: [b.screenId], add: ['pilot'] })).status, 200)
  const both = await until(GUARD, async () => {
    await alertWorker.runOnce()
    const ids = await openFor()
    return ids.length === 2 ? ids : undefined
  })
  t.same(both, [a.screenId, b.screenId].sort(), 'a screen that came to match is watched')

  // Once the rule is gone the group can go.
  t.equal((await c.call('DELETE', `/v1/alert-rules/${rule.id}`)).status, 200)
  t.equal((await c.call('DELETE', `/v1/groups/${group.id}`)).status, 200)
})
