// A cloud restart on the same data dir (file database + LevelDB broker store): the
// device's persistent session keeps messages queued while it was away, the retained
// desired state survives, and versions keep increasing.
import t from 'tap'
import { connectDevice, startCloud, tempDir } from './link.js'
import { ManualClock } from '../../src/clock.js'
import { InMemoryContentResolver } from '../../src/testing/InMemoryContentResolver.js'

t.test('queued QoS 1 messages and the retained desired state survive a restart', async (t) => {
  const dataDir = tempDir(t)
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const content = new InMemoryContentResolver()
  const first = await startCloud(t, { dataDir, fileDb: true, clock, content })
  content.add(first.workspaceId, { kind: 'media', id: 'med_a' })
  const d = await first.pair()
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${first.running.mqttPort}`, d)
  const v1 = await dev.next(() => true)
  await dev.client.endAsync() // offline; the session (and its subscription) stays
  const cast = (await first.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_a' })).body.data
  const beforeRestart = (await first.call('GET', `/v1/screens/${d.screenId}`)).body.data.desiredVersion
  t.equal(beforeRestart, v1.version + 1)
  await first.running.close()

  const second = await startCloud(t, { dataDir, fileDb: true, clock, content, workspace: { id: first.workspaceId, apiKey: first.apiKey } })
  const url = `mqtt://127.0.0.1:${second.running.mqttPort}`
  const back = await connectDevice(t, url, d, {}, false) // no new SUBSCRIBE: only the session can deliver
  const queued = await back.next((s) => s.version === beforeRestart)
  t.same(
    queued.casts.map((x) => x.id),
    [cast.id],
    'the message queued before the restart is delivered',
  )

  const cleared = await second.call('POST', `/v1/casts/${cast.id}/clear`)
  t.equal(cleared.status, 200)
  const after = await back.next((s) => s.version > beforeRestart)
  t.equal(after.version, beforeRestart + 1, 'the version keeps increasing across the restart')
  t.same(after.casts, [])
  await back.client.endAsync()
  await second.running.close()

  const third = await startCloud(t, { dataDir, fileDb: true, clock, content, workspace: { id: first.workspaceId, apiKey: first.apiKey } })
  const fresh = await connectDevice(t, `mqtt://127.0.0.1:${third.running.mqttPort}`, d, { clean: true })
  const retained = await fresh.next(() => true)
  t.equal(retained.version, after.version, 'the retained desired state survived the second restart')
})
