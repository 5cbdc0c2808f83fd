// Play-log retention: the hourly housekeeper deletes plays that started more than
// SVC_PLAY_LOG_RETENTION_DAYS ago (every workspace), and keeps the rest. The play log's
// module is wired alone (wireDomains): the subject is its clean-up task, not HTTP.
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { PlayLogRepository, type PlayLogInput } from '../../src/domains/playlog/PlayLogRepository.js'
import { PLAY_LOG_RETENTION_DAYS } from '../../src/domains/playlog/PlayLogService.js'
import { wireDomains } from '../domains.js'

const play = (startedAt: string, itemId: string): PlayLogInput => ({
  source: 'assignment',
  contentKind: 'media',
  contentId: 'med_1',
  castId: null,
  emergencyId: null,
  itemKind: 'media',
  itemId,
  zone: null,
  startedAt,
  endedAt: new Date(Date.parse(startedAt) + 10_000).toISOString(),
  durationMs: 10_000,
})

t.test('the setting: a default, a positive whole number of days', async (t) => {
  t.equal(loadConfig({}).playLogRetentionDays, PLAY_LOG_RETENTION_DAYS)
  t.equal(loadConfig({ SVC_PLAY_LOG_RETENTION_DAYS: '30' }).playLogRetentionDays, 30)
  t.throws(() => loadConfig({ SVC_PLAY_LOG_RETENTION_DAYS: '0' }), /SVC_PLAY_LOG_RETENTION_DAYS must be an integer >= 1/)
  t.throws(() => loadConfig({ SVC_PLAY_LOG_RETENTION_DAYS: '1.5' }))
})

t.test('the housekeeper deletes plays past the retention period, in every workspace, and only those', async (t) => {
  const d = await wireDomains(t, ['playLog'], { playLogRetentionDays: 30 })
  const repo = new PlayLogRepository(d.db.kysely)
  const now = d.clock.now().getTime()
  const daysAgo = (d: number) => new Date(now - d * 86_400_000).toISOString()
  await repo.insert('ws_a', 'scr_a', [play(daysAgo(45), 'old'), play(daysAgo(30.01), 'just-past'), play(daysAgo(29.99), 'just-inside')], daysAgo(0))
  await repo.insert('ws_b', 'scr_b', [play(daysAgo(31), 'old-b'), play(daysAgo(1), 'new-b')], daysAgo(0))
  const ids = async () => (await d.db.kysely.selectFrom('play_log').select('item_id').orderBy('item_id').execute()).map((r) => r.item_id)

  await d.housekeeper.runOnce()
  t.same(await ids(), ['just-inside', 'new-b'], 'plays started more than 30 days ago are gone; the rest stay')
  d.clock.advance(2 * 86_400_000)
  t.equal(await d.provided.playLog.purgeOld(), 1, 'two days on, the next one goes')
  t.same(await ids(), ['new-b'])
})
