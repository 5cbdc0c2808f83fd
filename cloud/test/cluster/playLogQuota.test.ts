// The play log's daily quota is the workspace's, whichever instance a screen's device is
// connected to: two instances of one cloud (one database, one Redis) count the plays they
// store together. Needs a Redis (SVC_TEST_REDIS_URL).
import { servicesOf } from '../../src/app.js'
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { redis, toolTest } from '@svc/shared/testing'
import { topics } from '@svc/shared/mqtt/index'
import { connectDevice, startCloud } from '../devicelink/link.js'
import { freshSqlite } from '../db/sqliteTemplate.js'
import { testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'

const play = (screenId: string, i: number) => ({
  screenId,
  source: 'assignment',
  contentKind: 'media',
  contentId: 'med_1',
  castId: null,
  emergencyId: null,
  itemKind: 'media',
  itemId: 'med_1',
  zone: null,
  startedAt: new Date(Date.UTC(2026, 5, 1, 10, 0, i * 10)).toISOString(),
  endedAt: new Date(Date.UTC(2026, 5, 1, 10, 0, i * 10 + 10)).toISOString(),
  durationMs: 10_000,
})

toolTest(t, redis, "two screens on two instances share their workspace's daily quota", async (t) => {
  // 4 plays a day per zone, no layout, 2 screens: 8 plays a day for the workspace.
  const config = { redisUrl: process.env.SVC_TEST_REDIS_URL ?? null, redisPrefix: `svc-test-${randomUUID()}:`, playLogDailyPerZone: 4 }
  const db = await freshSqlite(testConfig(config).dbBusyTimeoutMs)
  const clock = new ManualClock('2026-06-01T09:00:00.000Z')
  const a = await startCloud(t, { clock, config, deps: { db } })
  const b = await startCloud(t, { clock, config, deps: { db }, workspace: { id: a.workspaceId, apiKey: a.apiKey } })
  t.teardown(() => db.close())
  const x = await a.pair('X')
  const y = await a.pair('Y')
  clock.set('2026-06-01T12:00:00.000Z')
  const onA = await connectDevice(t, `mqtt://127.0.0.1:${a.running.mqttPort}`, x, {}, false)
  const onB = await connectDevice(t, `mqtt://127.0.0.1:${b.running.mqttPort}`, y, {}, false)
  const batch = (id: string) => JSON.stringify({ batchId: id, records: Array.from({ length: 6 }, (_, i) => play(id, i)) })
  await onA.client.publishAsync(topics.playLog(x.screenId), batch(x.screenId), { qos: 1 })
  await onB.client.publishAsync(topics.playLog(y.screenId), batch(y.screenId), { qos: 1 })
  const n = (await db.all<{ n: number }>('SELECT count(*) AS n FROM play_log'))[0]!.n
  t.equal(Number(n), 8, "the workspace's 8 plays of the day, stored through both instances")
  t.equal(servicesOf(a.running.app).playLog.stats.refused.quota, 0, 'A stored its 6')
  t.equal(servicesOf(b.running.app).playLog.stats.refused.quota, 4, 'B found 2 left of the day')
})
