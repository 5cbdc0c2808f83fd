// CastRepository on both engines: which screens a cast holds is derived (a newer cast's row
// on a screen takes it; the older cast's rows are never rewritten), an older cast holding no
// screen any more is `replaced` by the newer one, ending a cast releases only what it still
// holds, and `paused` follows the screens it still holds (not the ones taken from it). On
// PostgreSQL, a cast's rows are estimated as a small share of the table however stale its
// statistics, so the live-cast lookup reads through the indexes.
import t from 'tap'
import { CompiledQuery } from 'kysely'
import { eachEngine, openEngine, requirePostgres } from './engines.js'
import type { Database } from '../../src/platform/db/Database.js'
import { CastRepository, type CastRecord } from '../../src/domains/takeovers/CastRepository.js'
import { EmergencyRepository, type EmergencyRecord } from '../../src/domains/takeovers/EmergencyRepository.js'
import { ScreenRepository } from '../../src/domains/screens/ScreenRepository.js'
import { screenRow } from '../fixtures/screenRows.js'

const WS = 'ws_1'
const AT = '2026-06-01T12:00:00.000Z'

async function seed(db: Database, screens: string[]): Promise<void> {
  await db.kysely.insertInto('workspaces').values({ id: WS, name: 'W', region: 'us', rate_limit: null, licensed_screens: null, created_at: AT }).execute()
  for (let i = 0; i < screens.length; i += 100)
    await db.kysely
      .insertInto('screens')
      .values(screens.slice(i, i + 100).map((id) => screenRow(id, WS, AT)))
      .execute()
}

const castRow = (id: string, n: number): CastRecord => ({
  id,
  workspace_id: WS,
  node_id: null,
  content_kind: 'media',
  content_id: `med_${id}`,
  content_name: null,
  scope_kind: 'screens',
  scope_node_id: null,
  scope_group_id: null,
  status: 'active',
  screen_count: n,
  triggered_at: AT,
  expires_at: null,
  ended_at: null,
  replaced_by: null,
  created_by: 'key:test',
})

const emergencyRow = (id: string, n: number): EmergencyRecord => ({
  id,
  workspace_id: WS,
  node_id: null,
  content_kind: 'media',
  content_id: 'med_alarm',
  content_name: null,
  message: null,
  scope_kind: 'screens',
  scope_node_id: null,
  scope_group_id: null,
  status: 'active',
  screen_count: n,
  screens_released: null,
  started_at: AT,
  cleared_at: null,
  created_by: 'key:test',
  cleared_by: null,
  reach_at: null,
  presentation: 'fullscreen',
  source_cap_feed_id: null,
  source_cap_alert_id: null,
  alert: null,
})

eachEngine(t, 'cast rows: a newer cast takes screens without rewriting the older rows; replaced, end and pause follow', async (t, db) => {
  await seed(db, ['scr_1', 'scr_2', 'scr_3', 'scr_4'])
  const repo = new CastRepository(db.kysely)
  const emergencies = new EmergencyRepository(db.kysely)
  const screens = new ScreenRepository(db.kysely)
  const target = (ids: string[]) => screens.targetIds(WS, { scopeIds: null, ids }, db.kysely)
  const status = async (id: string) =>
    db.kysely.selectFrom('casts').select(['status', 'replaced_by', 'ended_at']).where('id', '=', id).executeTakeFirstOrThrow()
  const held = async (ids: string[]) => (await repo.heldBy(WS, ids)).map((r) => `${r.screen_id}:${r.id}`).sort()
  const cast = async (id: string, ids: string[]) => {
    const r = await db.transaction(async (tx) => {
      const out = await repo.insertTakingScreens(castRow(id, ids.length), target(ids), tx.kysely)
      await repo.refreshPause([id, ...out.older], tx.kysely)
      return out
    })
    return r
  }

  // ids are time-ordered: cast_a < cast_b < cast_c
  t.same(await cast('cast_a', ['scr_1', 'scr_2', 'scr_3']), { older: [], screenCount: 3 })
  t.same(await cast('cast_b', ['scr_2']), { older: ['cast_a'], screenCount: 1 }, 'the newer cast took from the older one')
  t.same(await held(['scr_1', 'scr_2', 'scr_3', 'scr_4']), ['scr_1:cast_a', 'scr_2:cast_b', 'scr_3:cast_a'], 'each screen is held by its newest cast only')
  const aRows = await db.kysely.selectFrom('cast_screens').select(['screen_id', 'state']).where('cast_id', '=', 'cast_a').orderBy('screen_id').execute()
  t.same(
    aRows.map((r) => r.state),
    ['active', 'active', 'active'],
    "the older cast's rows are not rewritten (taken is derived)",
  )
  t.match(await status('cast_a'), { status: 'active', replaced_by: null }, 'the older cast still holds screens: not replaced')
  t.same(await repo.liveOnScreens(['scr_2']), ['cast_b'], 'live casts on a screen: the one holding it')
  t.same((await repo.liveOnTarget(WS, target(['scr_2']))).sort(), ['cast_b'])
  t.same(await repo.screenIdsOf('cast_b'), ['scr_2'])

  // A pause follows the screens the cast still holds: an emergency on scr_1 and scr_3 pauses
  // cast_a even though its (taken) row on scr_2 has no emergency.
  await db.transaction(async (tx) => {
    await emergencies.insert(emergencyRow('emg_1', 2), target(['scr_1', 'scr_3']), tx.kysely)
    await repo.refreshPause(['cast_a', 'cast_b'], tx.kysely)
  })
  t.equal((await status('cast_a')).status, 'paused', 'every screen it still holds is under the emergency')
  t.equal((await status('cast_b')).status, 'active', 'its screen is not')
  await db.transaction(async (tx) => {
    await emergencies.clear('emg_1', AT, 'key:test', tx.kysely)
    await repo.refreshPause(['cast_a', 'cast_b'], tx.kysely)
  })
  t.equal((await status('cast_a')).status, 'active', 'resumes when the emergency is cleared')

  // cast_c takes the rest of cast_a's screens: cast_a holds none and is replaced by it.
  t.same(await cast('cast_c', ['scr_1', 'scr_3', 'scr_4']), { older: ['cast_a'], screenCount: 3 })
  t.match(await status('cast_a'), { status: 'replaced', replaced_by: 'cast_c', ended_at: AT })
  t.match(await status('cast_b'), { status: 'active', replaced_by: null })
  t.same(await held(['scr_1', 'scr_2', 'scr_3', 'scr_4']), ['scr_1:cast_c', 'scr_2:cast_b', 'scr_3:cast_c', 'scr_4:cast_c'])

  // Ending the newest releases its screens; they do not go back to the older cast.
  t.same((await db.transaction((tx) => repo.end('cast_c', 'cleared', AT, tx.kysely)))?.sort(), ['scr_1', 'scr_3', 'scr_4'])
  t.same(await held(['scr_1', 'scr_2', 'scr_3', 'scr_4']), ['scr_2:cast_b'], 'a screen taken stays taken')
  t.equal((await db.transaction((tx) => repo.end('cast_c', 'cleared', AT, tx.kysely))) ?? null, null, 'ended once')

  // cast_d takes scr_2 from cast_b, then cast_b is cleared: it releases nothing it lost.
  await cast('cast_d', ['scr_2', 'scr_4'])
  t.match(await status('cast_b'), { status: 'replaced', replaced_by: 'cast_d' })
  t.same((await repo.screensShowing(WS, ['med_cast_b', 'med_cast_d'])).sort(), ['scr_2', 'scr_4'], 'content shown: the holding cast only')
  t.equal(await repo.countShowing(WS, 'media', 'med_cast_d'), 1, 'a live cast shows it')
  t.equal(await repo.countShowing(WS, 'media', 'med_cast_b'), 0, 'a replaced cast does not')
})

eachEngine(t, 'cast rows: a row left as `replaced` by the earlier rule is not held', async (t, db) => {
  await seed(db, ['scr_1', 'scr_2'])
  const repo = new CastRepository(db.kysely)
  await db.kysely.insertInto('casts').values(castRow('cast_a', 2)).execute()
  await db.kysely
    .insertInto('cast_screens')
    .values([
      { cast_id: 'cast_a', screen_id: 'scr_1', state: 'active' },
      { cast_id: 'cast_a', screen_id: 'scr_2', state: 'replaced' },
    ])
    .execute()
  t.same(
    (await repo.heldBy(WS, ['scr_1', 'scr_2'])).map((r) => r.screen_id),
    ['scr_1'],
  )
  t.same(await db.transaction((tx) => repo.end('cast_a', 'cleared', AT, tx.kysely)), ['scr_1'])
})

eachEngine(t, 'cast rows at 2,000 screens: pause and replace stay set-based after a cleared emergency left rows behind', async (t, db) => {
  const ids = Array.from({ length: 10_000 }, (_, i) => `scr_${String(i).padStart(5, '0')}`)
  await seed(db, ids)
  const repo = new CastRepository(db.kysely)
  const emergencies = new EmergencyRepository(db.kysely)
  const screens = new ScreenRepository(db.kysely)
  const all = () => screens.targetIds(WS, { scopeIds: null }, db.kysely)
  const status = async (id: string) => (await db.kysely.selectFrom('casts').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status
  await db.transaction((tx) => emergencies.insert(emergencyRow('emg_1', 2000), all(), tx.kysely))
  await db.transaction((tx) => emergencies.clear('emg_1', AT, 'key:test', tx.kysely))
  await db.transaction((tx) => repo.insertTakingScreens(castRow('cast_a', 2000), all(), tx.kysely))
  await db.transaction(async (tx) => {
    const { older } = await repo.insertTakingScreens(castRow('cast_b', 2000), all(), tx.kysely)
    t.same(older, ['cast_a'])
  })
  t.equal(await status('cast_a'), 'replaced')
  await db.transaction(async (tx) => {
    await emergencies.insert(emergencyRow('emg_2', 2000), all(), tx.kysely)
    await repo.refreshPause(['cast_b'], tx.kysely)
  })
  t.equal(await status('cast_b'), 'paused', 'all 2,000 held screens under the emergency')
})

t.test('PostgreSQL: a takeover looks up the live casts on its screens through their own rows, not the history', async (t) => {
  const url = requirePostgres(t, 'takeover row estimates [postgres]')
  if (!url) return
  const db = await openEngine(t, 'postgres')
  const ids = Array.from({ length: 10_000 }, (_, i) => `scr_${String(i).padStart(5, '0')}`)
  await seed(db, ids)
  const repo = new CastRepository(db.kysely)
  const screens = new ScreenRepository(db.kysely)
  const all = () => screens.targetIds(WS, { scopeIds: null }, db.kysely)
  const cast = (id: string) => db.transaction((tx) => repo.insertTakingScreens(castRow(id, ids.length), all(), tx.kysely))
  // Statistics taken while the table holds one cast (as the first takeovers leave them).
  await cast('cast_a')
  await db.run('ANALYZE cast_screens')
  for (const id of ['cast_b', 'cast_c', 'cast_d', 'cast_e', 'cast_f']) await cast(id)

  // The estimate for "the rows of one cast" as a statement prepared once reads it (the id
  // unknown): a fixed share of the table, not "every row" (what one analysed cast implies).
  const estimate = await db.transaction(async (tx) => {
    await tx.run('SET LOCAL plan_cache_mode = force_generic_plan')
    await tx.run('PREPARE rows_of_cast(text) AS SELECT screen_id FROM cast_screens WHERE cast_id = $1')
    const r = await tx.all<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>("EXPLAIN (FORMAT JSON) EXECUTE rows_of_cast('cast_f')")
    await tx.run('DEALLOCATE rows_of_cast')
    return r[0]!['QUERY PLAN'][0]!.Plan['Plan Rows']
  })
  t.ok(estimate <= 0.05 * 6 * ids.length, `the rows of one cast are estimated at ${estimate} of ${6 * ids.length}`)

  let statement: CompiledQuery | undefined
  const executor = db.kysely.getExecutor()
  const run = executor.executeQuery.bind(executor)
  executor.executeQuery = ((q: CompiledQuery, ...rest: unknown[]) => {
    if (/^select "c"\."id" from "casts"/.test(q.sql)) statement = q
    return (run as (...a: unknown[]) => unknown)(q, ...rest)
  }) as typeof executor.executeQuery
  t.same(await repo.liveOnTarget(WS, all()), ['cast_f'])
  executor.executeQuery = run
  t.ok(statement, 'the statement was seen')
  const plan = await db.kysely.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${statement!.sql}`, [...statement!.parameters]))
  const nodes: { 'Node Type': string; 'Relation Name'?: string }[] = []
  const walk = (n: { Plans?: unknown[] } & Record<string, unknown>) => {
    nodes.push(n as never)
    for (const c of n.Plans ?? []) walk(c as never)
  }
  walk((plan.rows[0]!['QUERY PLAN'] as { Plan: never }[])[0]!.Plan)
  const scans = nodes.filter((n) => n['Relation Name'] === 'cast_screens').map((n) => n['Node Type'])
  t.ok(scans.length > 0, `cast_screens is read (${scans.join(', ')})`)
  t.notOk(scans.includes('Seq Scan'), `no sequential scan of every cast's rows (${scans.join(', ')})`)
})
