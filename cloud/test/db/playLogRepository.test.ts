// PlayLogRepository on both engines: idempotent inserts (a replayed batch, duplicates
// inside one batch, more rows than one INSERT chunk), range and (startedAt, id) paging,
// workspace and screen filters.
import t from 'tap'
import { eachEngine } from './engines.js'
import { PlayLogRepository, playRecordId, type PlayLogInput } from '../../src/domains/playlog/PlayLogRepository.js'

const rec = (i: number, extra: Partial<PlayLogInput> = {}): PlayLogInput => ({
  source: 'assignment',
  contentKind: 'playlist',
  contentId: 'pl_1',
  castId: null,
  emergencyId: null,
  itemKind: 'media',
  itemId: `med_${i}`,
  zone: i % 2 ? 'left' : null,
  // Two plays per second: pairs share a startedAt, so paging must order by id within it.
  startedAt: new Date(Date.UTC(2026, 5, 1, 10, 0, Math.floor(i / 2))).toISOString(),
  endedAt: new Date(Date.UTC(2026, 5, 1, 10, 0, Math.floor(i / 2) + 1)).toISOString(),
  durationMs: 3_000_000_000 + i,
  ...extra,
})

eachEngine(t, 'play log repository', async (t, db) => {
  const repo = new PlayLogRepository(db.kysely)
  const now = '2026-06-01T12:00:00.000Z'
  const batch = Array.from({ length: 150 }, (_, i) => rec(i))
  t.equal(await repo.insert('ws_1', 'scr_1', [...batch, batch[0]!], now), 150, 'new rows counted; a duplicate inside the batch is stored once')
  t.equal(await repo.insert('ws_1', 'scr_1', batch, now), 0, 'the same batch again stores nothing')
  t.equal(await repo.insert('ws_1', 'scr_1', [batch[149]!, rec(150)], now), 1, 'an overlapping batch stores only the new record')
  t.equal(await repo.insert('ws_1', 'scr_2', [rec(0)], now), 1, 'the same play on another screen is another record')
  t.equal(await repo.insert('ws_2', 'scr_9', [rec(0), rec(1)], now), 2)
  t.not(playRecordId('scr_1', rec(0)), playRecordId('scr_2', rec(0)))

  const range = { from: null, to: null }
  t.equal(await repo.count('ws_1', ['scr_1'], range), 151)
  t.equal(await repo.count('ws_1', ['scr_1', 'scr_2'], range), 152)
  t.equal(await repo.count('ws_2', ['scr_1'], range), 0, 'another workspace sees nothing of scr_1')
  t.equal(await repo.count('ws_1', [], range), 0)

  const first = (await repo.list('ws_1', ['scr_1'], range, null, 1))[0]!
  t.equal(first.duration_ms, 3_000_000_000, 'a duration past 32 bits reads back as a number')
  t.equal(first.zone, null)

  // Page through [10:00:10, 10:00:40) three rows at a time.
  const r = { from: '2026-06-01T10:00:10.000Z', to: '2026-06-01T10:00:40.000Z' }
  const got: string[] = []
  let after = null
  for (;;) {
    const page = await repo.list('ws_1', ['scr_1'], r, after, 3)
    got.push(...page.map((x) => x.item_id))
    if (page.length < 3) break
    const last = page[page.length - 1]!
    after = { startedAt: last.started_at, id: last.id }
  }
  t.equal(got.length, 60, 'every play in the range once')
  t.same([...got].sort(), Array.from({ length: 60 }, (_, i) => `med_${i + 20}`).sort())
  t.equal(await repo.workspaceOfScreen('nope'), null)
})
