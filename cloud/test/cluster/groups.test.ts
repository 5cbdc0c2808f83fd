// Group membership across two instances of one cloud (one database, one Redis, each its own
// broker): an emergency started on B aimed at a group reaches a screen that a tag written
// on A brings into the group, and lets go of one a bulk tag on A takes out; a rule changed
// on A moves the emergency's screens too. The devices are real MQTT clients connected to B.
// Needs a Redis (SVC_TEST_REDIS_URL).
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { HANG_GUARD_MS, redis, toolTest } from '@svc/shared/testing'
import { connectDevice, startCloud, type Cloud } from '../devicelink/link.js'
import { freshSqlite } from '../db/sqliteTemplate.js'
import { testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'

/** A hang guard: what was awaited is named in the rejection. */
const GUARD = HANG_GUARD_MS

async function twoClouds(t: Test): Promise<{ a: Cloud; b: Cloud }> {
  const config = { redisUrl: process.env.SVC_TEST_REDIS_URL ?? null, redisPrefix: `svc-test-${randomUUID()}:` }
  const db = await freshSqlite(testConfig(config).dbBusyTimeoutMs)
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const content = new InMemoryContentResolver()
  const a = await startCloud(t, { clock, content, config, deps: { db } })
  const b = await startCloud(t, { clock, content, config, deps: { db }, workspace: { id: a.workspaceId, apiKey: a.apiKey } })
  // Registered after the clouds' own teardown, so it runs after them.
  t.teardown(() => db.close())
  content.add(a.workspaceId, { kind: 'media', id: 'med_fire' })
  return { a, b }
}

toolTest(t, redis, 'a membership change written on A moves the screens of an emergency started on B, devices on B', async (t) => {
  const { a, b } = await twoClouds(t)
  const [s1, s2] = [await a.pair('Lobby 1'), await a.pair('Lobby 2')]
  const url = `mqtt://127.0.0.1:${b.running.mqttPort}`
  const [d1, d2] = [await connectDevice(t, url, s1), await connectDevice(t, url, s2)]
  for (const d of [d1, d2]) await d.next(() => true, GUARD)
  t.equal((await a.call('PATCH', `/v1/screens/${s1.screenId}`, { tags: ['lobby'] })).status, 200)
  const group = (await a.call('POST', '/v1/groups', { name: 'Lobby', kind: 'dynamic', rule: { all: [{ tag: 'lobby' }] } })).body.data

  const res = await b.call('POST', '/v1/emergencies', { contentKind: 'media', contentId: 'med_fire', scopeKind: 'group', groupId: group.id, message: 'Leave' })
  t.equal(res.status, 201, JSON.stringify(res.body))
  const emg = res.body.data
  t.equal(emg.screenCount, 1)
  await d1.next((s) => s.emergency?.id === emg.id, GUARD)
  t.equal(d2.latest!.emergency, null)

  // Tagged on A: the screen joins B's emergency.
  const before2 = d2.latest!.version
  t.equal((await a.call('POST', '/v1/screens/bulk-tag', { screenIds: [s2.screenId], add: ['lobby'] })).status, 200)
  await d2.next((s) => s.version > before2 && s.emergency?.id === emg.id, GUARD)
  t.equal((await b.call('GET', `/v1/emergencies/${emg.id}`)).body.data.screenCount, 2, "B's answer counts it")

  // Tagged out on A: the screen leaves it.
  const before1 = d1.latest!.version
  t.equal((await a.call('PATCH', `/v1/screens/${s1.screenId}`, { tags: [] })).status, 200)
  const left = await d1.next((s) => s.version > before1, GUARD)
  t.equal(left.emergency, null, 'a screen that stops matching leaves the emergency')

  // The rule changed on A: the screens follow it.
  const again = d1.latest!.version
  t.equal((await a.call('PATCH', `/v1/groups/${group.id}`, { rule: { any: [{ tag: 'lobby' }, { name: 'lobby 1' }] } })).status, 200)
  await d1.next((s) => s.version > again && s.emergency?.id === emg.id, GUARD)
  t.equal((await b.call('GET', `/v1/emergencies/${emg.id}`)).body.data.screenCount, 2)
  t.equal((await b.call('POST', `/v1/emergencies/${emg.id}/clear`)).status, 200)
  await d2.next((s) => s.emergency === null && s.version > before2, GUARD)
})
