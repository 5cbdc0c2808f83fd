// PlayLogRepository on both engines: idempotent inserts (a replayed batch, duplicates
// inside one batch, more rows than one INSERT chunk), range and (startedAt, id) paging,
// workspace and screen filters.
import t from 'tap'
import { eachEngine } from './engines.js'
import { PlayLogRepository, playRecordId, type PlayLogInput } from '../../src/domains/playlog/PlayLogRepository.js'
import { screenRow } from '../fixtures/screenRows.js'
import { loadMigrations, migrate } from '../../src/platform/db/migrate.js'

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

// The summary reads whole UTC days from the daily totals, whole hours from the hourly ones
// and the partial hours at the window's ends from the plays: over random plays and random windows (midnight-aligned,
// within one day, across several), it answers what counting the plays one by one answers,
// a re-sent batch adds nothing, and retention drops a day's totals once the day is past.
eachEngine(t, 'play log summary: daily totals agree with the plays', async (t, db) => {
  const repo = new PlayLogRepository(db.kysely)
  const AT = '2026-05-01T00:00:00.000Z'
  await db.kysely.insertInto('workspaces').values({ id: 'ws_1', name: 'W', region: 'us', rate_limit: null, licensed_screens: null, created_at: AT }).execute()
  await db.kysely
    .insertInto('nodes')
    .values({ id: 'node_a', workspace_id: 'ws_1', parent_id: null, name: 'A', kind: 'location', created_at: AT, updated_at: AT })
    .execute()
  const screens = ['scr_1', 'scr_2', 'scr_3']
  await db.kysely
    .insertInto('screens')
    .values(screens.map((id, i) => screenRow(id, 'ws_1', AT, { node_id: i === 0 ? 'node_a' : null })))
    .execute()
  let seed = 7
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % n
  }
  const base = Date.UTC(2026, 5, 1)
  const plays: { screen: string; kind: string; id: string; start: number; ms: number; power: string }[] = []
  for (const screen of screens) {
    const batch: PlayLogInput[] = []
    for (let i = 0; i < 400; i++) {
      const start = base + rand(5 * 86_400) * 1000
      const ms = 1000 + rand(60) * 1000
      const p = { screen, kind: rand(3) ? 'playlist' : 'media', id: `c_${rand(4)}`, start, ms, power: ['on', 'off', 'unknown'][rand(3)]! }
      batch.push(
        rec(i, {
          contentKind: p.kind,
          contentId: p.id,
          startedAt: new Date(start).toISOString(),
          endedAt: new Date(start + ms).toISOString(),
          durationMs: ms,
          panelPower: p.power as PlayLogInput['panelPower'],
        }),
      )
      plays.push(p)
    }
    await db.transaction((tx) => repo.insert('ws_1', screen, batch, AT, tx.kysely))
    t.equal(await db.transaction((tx) => repo.insert('ws_1', screen, batch.slice(0, 50), AT, tx.kysely)), 0, 'a re-sent batch adds nothing')
  }
  const counted = (from: number, to: number, only: string[] | null) => {
    const m = new Map<string, { plays: number; ms: number; ms_on: number; screens: Set<string> }>()
    for (const p of plays) {
      if (p.start < from || p.start >= to || (only && !only.includes(p.screen))) continue
      const key = `${p.kind}|${p.id}`
      const e = m.get(key) ?? { plays: 0, ms: 0, ms_on: 0, screens: new Set<string>() }
      e.plays++
      e.ms += p.ms
      if (p.power === 'on') e.ms_on += p.ms
      e.screens.add(p.screen)
      m.set(key, e)
    }
    return [...m.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, e]) => {
        const [content_kind, content_id] = key.split('|') as [string, string]
        return { content_kind, content_id, plays: e.plays, ms: e.ms, ms_on: e.ms_on, screens: e.screens.size }
      })
  }
  const iso = (ms: number) => new Date(ms).toISOString()
  const windows: [number, number][] = [
    [base, base + 5 * 86_400_000],
    [base + 86_400_000, base + 2 * 86_400_000],
    [base + 3_600_000, base + 7_200_000],
    [base - 86_400_000, base + 86_400_000 + 1],
  ]
  for (let i = 0; i < 30; i++) {
    const a = base - 86_400_000 + rand(7 * 86_400) * 1000
    windows.push([a, a + 1000 + rand(4 * 86_400) * 1000])
  }
  for (const [from, to] of windows) {
    const got = await repo.summary('ws_1', { from: iso(from), to: iso(to) }, { scopeIds: null, nodeIds: null }, null, 100)
    t.same(got, counted(from, to, null), `${iso(from)} – ${iso(to)}`)
  }
  const [from, to] = [base + 3_600_000, base + 4 * 86_400_000 + 60_000]
  t.same(
    await repo.summary('ws_1', { from: iso(from), to: iso(to) }, { scopeIds: null, nodeIds: ['node_a'] }, null, 100),
    counted(from, to, ['scr_1']),
    'one location',
  )
  const firstTwo = await repo.summary('ws_1', { from: iso(from), to: iso(to) }, { scopeIds: null, nodeIds: null, contentKind: 'playlist' }, null, 2)
  const rest = await repo.summary(
    'ws_1',
    { from: iso(from), to: iso(to) },
    { scopeIds: null, nodeIds: null, contentKind: 'playlist' },
    { kind: firstTwo[1]!.content_kind, id: firstTwo[1]!.content_id },
    100,
  )
  t.same(
    [...firstTwo, ...rest],
    counted(from, to, null).filter((r) => r.content_kind === 'playlist'),
    'paged by content, one kind',
  )

  // Retention at noon on the third day: the first two days' totals go, the third's stays.
  await repo.deleteStartedBefore(iso(base + 2.5 * 86_400_000))
  const days = await db.kysely.selectFrom('play_log_daily').select('period').distinct().orderBy('period').execute()
  t.same(
    days.map((d) => d.period),
    ['2026-06-03', '2026-06-04', '2026-06-05'],
  )
  const firstHour = await db.kysely
    .selectFrom('play_log_hourly')
    .select((eb) => eb.fn.min('period').as('p'))
    .executeTakeFirstOrThrow()
  t.equal(firstHour.p, '2026-06-03T12', 'hours before the cutoff go too')
})

// A database with plays from before the daily totals gets them when it upgrades.
eachEngine(
  t,
  'play log summary: the upgrade fills the daily and hourly totals from the stored plays',
  async (t, db) => {
    const all = await loadMigrations()
    await migrate(
      db,
      all.filter((m) => m.version < 530),
    )
    const repo = new PlayLogRepository(db.kysely)
    const AT = '2026-06-01T12:00:00.000Z'
    await db.kysely
      .insertInto('play_log')
      .values(
        [rec(0, { panelPower: 'on' }), rec(1), rec(2, { startedAt: '2026-06-02T08:00:00.000Z', endedAt: '2026-06-02T08:00:01.000Z' })].map((r) => ({
          id: playRecordId('scr_1', r),
          workspace_id: 'ws_1',
          screen_id: 'scr_1',
          source: r.source,
          content_kind: r.contentKind,
          content_id: r.contentId,
          cast_id: null,
          emergency_id: null,
          item_kind: r.itemKind,
          item_id: r.itemId,
          zone: r.zone,
          started_at: r.startedAt,
          ended_at: r.endedAt,
          duration_ms: r.durationMs,
          received_at: AT,
          panel_power: r.panelPower ?? 'unknown',
        })),
      )
      .execute()
    t.same(
      (
        await migrate(
          db,
          all.filter((m) => m.version <= 530),
        )
      ).applied,
      [530],
    )
    const days = await db.kysely.selectFrom('play_log_daily').selectAll().orderBy('period').execute()
    t.same(
      days.map((d) => [d.period, d.plays, d.duration_ms, d.panel_on_ms]),
      [
        ['2026-06-01', 2, 6_000_000_001, 3_000_000_000],
        ['2026-06-02', 1, 3_000_000_002, 0],
      ],
    )
    const hours = await db.kysely.selectFrom('play_log_hourly').selectAll().orderBy('period').execute()
    t.same(
      hours.map((d) => [d.period, d.plays]),
      [
        ['2026-06-01T10', 2],
        ['2026-06-02T08', 1],
      ],
    )
    const got = await repo.summary('ws_1', { from: '2026-06-01T00:00:00.000Z', to: '2026-06-03T00:00:00.000Z' }, { scopeIds: null, nodeIds: null }, null, 10)
    t.same(got, [{ content_kind: 'playlist', content_id: 'pl_1', plays: 3, ms: 9_000_000_003, ms_on: 3_000_000_000, screens: 1 }])
  },
  { migrate: false },
)
