// A cloud restart on the same data dir. The broker keeps nothing (sessions, queued
// messages and retained states live in memory); the database is the durable store, and
// devices get back what their session held from it: a device that was offline, or
// connected across the restart, gets exactly its latest desired state (rebuilt from the
// database, with a newer version), never an older version after a newer one, whether or
// not it subscribes again.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { DesiredState } from '@svc/shared/mqtt/index'
import { connectDevice, startCloud, tempDir, type DeviceClient } from './link.js'
import { ManualClock } from '../../src/platform/clock.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'

/** No version the device received is older than one it received before (a repeat is allowed). */
function increasing(dev: DeviceClient): boolean {
  return dev.states.every((s, i) => i === 0 || s.version >= dev.states[i - 1]!.version)
}

const castIds = (s: DesiredState) => s.casts.map((x) => x.id)

t.test('an offline device gets its latest desired state after a restart, without subscribing again', async (t) => {
  const dataDir = tempDir(t)
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const content = new InMemoryContentResolver()
  const first = await startCloud(t, { dataDir, fileDb: true, clock, content })
  content.add(first.workspaceId, { kind: 'media', id: 'med_a' })
  const d = await first.pair()
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${first.running.mqttPort}`, d)
  const v1 = await dev.next(() => true)
  await dev.client.endAsync() // offline; its session stays (in this process's memory only)
  const cast = (await first.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_a' })).body.data
  await servicesOf(first.running.app).desiredPublisher.idle() // the answer comes before publishing
  const beforeRestart = (await first.call('GET', `/v1/screens/${d.screenId}`)).body.data.desiredVersion
  t.equal(beforeRestart, v1.version + 1)
  await first.running.close()
  t.notOk(existsSync(join(dataDir, 'broker')), 'the broker keeps nothing on disk')

  const second = await startCloud(t, { dataDir, fileDb: true, clock, content, workspace: { id: first.workspaceId, apiKey: first.apiKey } })
  const url = `mqtt://127.0.0.1:${second.running.mqttPort}`
  const back = await connectDevice(t, url, d, {}, false) // no new SUBSCRIBE: the cloud restores the session's
  const latest = await back.next((s) => s.casts.length > 0)
  t.same(castIds(latest), [cast.id], 'the state it missed, with the cast, arrives')
  t.ok(latest.version > beforeRestart, 'rebuilt from the database with a newer version')
  t.equal(back.states.length, 1, 'only the latest state, no older one')

  const cleared = await second.call('POST', `/v1/casts/${cast.id}/clear`)
  t.equal(cleared.status, 200)
  const after = await back.next((s) => s.version > latest.version)
  t.same(after.casts, [], 'later changes reach it through the restored subscription')
  t.ok(increasing(back), 'versions only increase')
  await back.client.endAsync()
  await second.running.close()

  const third = await startCloud(t, { dataDir, fileDb: true, clock, content, workspace: { id: first.workspaceId, apiKey: first.apiKey } })
  const fresh = await connectDevice(t, `mqtt://127.0.0.1:${third.running.mqttPort}`, d, { clean: true })
  const retained = await fresh.next(() => true)
  t.ok(retained.version > after.version, 'a new session gets the latest state, newer than any before')
  t.same(retained.casts, [], 'and it is the latest: the cast stays cleared')
  await new Promise((r) => setTimeout(r, 200))
  t.equal(fresh.states.length, 1, 'once')
  const row = (await third.call('GET', `/v1/screens/${d.screenId}`)).body.data
  t.equal(row.desiredVersion, retained.version, 'the version the database holds')
})

t.test('a device connected across a restart reconnects by itself and holds its latest state', async (t) => {
  const dataDir = tempDir(t)
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const content = new InMemoryContentResolver()
  const first = await startCloud(t, { dataDir, fileDb: true, clock, content })
  content.add(first.workspaceId, { kind: 'media', id: 'med_a' })
  const [a, b] = [await first.pair('A'), await first.pair('B')]
  const mqttPort = first.running.mqttPort!
  const url = `mqtt://127.0.0.1:${mqttPort}`
  // A resubscribes when the broker has lost its session (mqtt.js does), B does not.
  const devA = await connectDevice(t, url, a, { reconnectPeriod: 100 })
  const devB = await connectDevice(t, url, b, { reconnectPeriod: 100, resubscribe: false })
  const cast = (await first.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_a' })).body.data
  for (const dev of [devA, devB]) await dev.next((s) => castIds(s).includes(cast.id))
  const held = [devA.latest!.version, devB.latest!.version]
  await first.running.close()

  const second = await startCloud(t, {
    dataDir,
    fileDb: true,
    clock,
    content,
    config: { mqttPort },
    workspace: { id: first.workspaceId, apiKey: first.apiKey },
  })
  for (const [i, dev] of [devA, devB].entries()) {
    const s = await dev.next((x) => x.version > held[i]!)
    t.same(castIds(s), [cast.id], `${dev === devA ? 'A' : 'B'}: its latest state, the cast, again after the restart`)
    t.ok(increasing(dev), `${dev === devA ? 'A' : 'B'}: no older version after a newer one (${dev.states.map((x) => x.version)})`)
  }
  // Both are online again per the API and keep getting changes.
  await servicesOf(second.running.app).presence.idle()
  const list = (await second.call('GET', '/v1/screens')).body.data as { id: string; status: string }[]
  t.same(
    list.map((s) => s.status),
    ['online', 'online'],
  )
  await second.call('POST', `/v1/casts/${cast.id}/clear`)
  for (const dev of [devA, devB]) t.same((await dev.next((s) => s.casts.length === 0)).casts, [])
})
