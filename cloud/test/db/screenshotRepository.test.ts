// ScreenshotRepository on both engines: open jobs per screen (one or several at once), sent, closing once (a late
// answer changes nothing), expiry of open jobs, retention with the hashes it frees, and
// whether a hash is still held by a screenshot or a media item.
import t from 'tap'
import { eachEngine } from './engines.js'
import { ScreenshotRepository, type ScreenshotRow } from '../../src/domains/screenshots/ScreenshotRepository.js'
import { StoredBytesRepository } from '../../src/domains/media/StoredBytesRepository.js'

const row = (id: string, screenId: string, createdAt: string): ScreenshotRow => ({
  id,
  workspace_id: 'ws_1',
  screen_id: screenId,
  status: 'queued',
  reason: null,
  sha256: null,
  size_bytes: null,
  width: null,
  height: null,
  source: null,
  created_at: createdAt,
  sent_at: null,
  completed_at: null,
})
const sha = (c: string) => c.repeat(64)

eachEngine(t, 'screenshot repository', async (t, db) => {
  const repo = new ScreenshotRepository(db.kysely)
  await repo.insert(row('shot_1', 'scr_a', '2026-06-01T10:00:00.000Z'))
  await repo.insert(row('shot_2', 'scr_a', '2026-06-01T10:05:00.000Z'))
  await repo.insert(row('shot_3', 'scr_b', '2026-06-01T10:06:00.000Z'))
  t.same(
    (await repo.openFor('scr_a')).map((r) => r.id),
    ['shot_1', 'shot_2'],
    'open jobs of a screen, oldest first',
  )
  const many = await repo.openForMany(['scr_a', 'scr_b', 'scr_none'])
  t.same(
    [...many].map(([id, rows]) => [id, rows.map((r) => r.id)]).sort(),
    [
      ['scr_a', ['shot_1', 'shot_2']],
      ['scr_b', ['shot_3']],
    ],
    'several screens in one read, each oldest first; a screen without open jobs is absent',
  )
  t.same(
    (await repo.openForMany(['scr_a'], '2026-06-01T10:01:00.000Z')).get('scr_a')?.map((r) => r.id),
    ['shot_2'],
    'createdSince leaves out the older ones',
  )
  await repo.markSent('shot_1', '2026-06-01T10:00:01.000Z')
  t.match(await repo.byId('shot_1'), { status: 'sent', sent_at: '2026-06-01T10:00:01.000Z' })

  const done = { status: 'ok', reason: null, completed_at: '2026-06-01T10:00:05.000Z', sha256: sha('a'), size_bytes: 3_000_000_000, width: 1920, height: 1080 }
  t.equal(await repo.complete('shot_1', done), true)
  t.equal(await repo.complete('shot_1', { status: 'failed', reason: 'late', completed_at: '2026-06-01T10:00:06.000Z' }), false, 'closed once')
  t.match(await repo.byId('shot_1'), { status: 'ok', width: 1920, height: 1080 })
  t.equal(Number((await repo.byId('shot_1'))!.size_bytes), 3_000_000_000, 'sizes past 2^31 survive')
  await repo.markSent('shot_1', '2026-06-01T10:00:09.000Z')
  t.equal((await repo.byId('shot_1'))!.status, 'ok', 'a late PUBACK does not reopen it')

  t.equal(await repo.expireOpen('2026-06-01T10:05:30.000Z', 'expired', '2026-06-01T10:20:00.000Z'), 1, 'only open jobs created before the cutoff')
  t.match(await repo.byId('shot_2'), { status: 'failed', reason: 'expired' })
  t.equal((await repo.byId('shot_3'))!.status, 'queued')

  t.equal(await new StoredBytesRepository(db.kysely).inUse(sha('a')), true)
  t.same(await repo.deleteBefore('2026-06-01T10:05:30.000Z'), [sha('a')], 'the hashes the deleted rows held')
  t.equal(await repo.byId('shot_1'), undefined)
  t.equal(await new StoredBytesRepository(db.kysely).inUse(sha('a')), false, 'no screenshot or media item holds it now')
  t.same(
    (await repo.openFor('scr_b')).map((r) => r.id),
    ['shot_3'],
  )
})
