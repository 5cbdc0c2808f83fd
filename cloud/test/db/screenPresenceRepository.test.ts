// ScreenPresenceRepository on both engines: batched reads and writes of the presence
// columns (more screens than one IN list), conditional transitions that report exactly the
// screens that changed, and the screen-to-workspace read.
import t from 'tap'
import { eachEngine } from './engines.js'
import { ScreenPresenceRepository } from '../../src/domains/devicelink/ScreenPresenceRepository.js'
import { screenRow } from '../fixtures/screenRows.js'

const AT = '2026-06-01T12:00:00.000Z'
const LATER = '2026-06-01T12:05:00.000Z'

eachEngine(t, 'screen presence repository', async (t, db) => {
  const k = db.kysely
  await k.insertInto('workspaces').values({ id: 'ws_1', name: 'W', region: 'us', rate_limit: null, licensed_screens: null, created_at: AT }).execute()
  const ids = Array.from({ length: 1203 }, (_, i) => `scr_${String(i).padStart(5, '0')}`)
  for (let i = 0; i < ids.length; i += 200) {
    await k
      .insertInto('screens')
      .values(ids.slice(i, i + 200).map((id, j) => screenRow(id, 'ws_1', AT, { name: `S${i + j}`, device_secret_hash: i + j === 0 ? 'hash0' : null })))
      .execute()
  }
  const repo = new ScreenPresenceRepository(k)

  const ws = await repo.workspacesOf([...ids, 'scr_nope'])
  t.equal(ws.size, ids.length, 'every existing screen, across IN-list chunks; the unknown one absent')

  const rows = await repo.rows(ids)
  t.equal(rows.size, ids.length)
  t.equal(rows.get(ids[5]!)?.status, 'offline', 'new screens start offline')

  const first = ids.slice(0, 1100)
  const changed = await repo.markOnline(first, AT)
  t.equal(changed.size, 1100, 'all went online')
  const again = await repo.markOnline(ids, LATER)
  t.same([...again].sort(), ids.slice(1100).sort(), 'only the ones not yet online change')
  const r0 = (await repo.rows([ids[0]!])).get(ids[0]!)!
  t.equal(r0.status_since, AT, 'an online screen keeps its status_since')

  await repo.touch(first, LATER)
  const seen = await k.selectFrom('screens').select(['last_seen_at']).where('id', 'in', first).execute()
  t.ok(
    seen.every((r) => r.last_seen_at === LATER),
    'touch wrote last_seen_at on every screen of the batch',
  )

  t.equal(await repo.markOffline(ids[0]!, LATER), true)
  t.equal(await repo.markOffline(ids[0]!, LATER), false, 'a second offline changes nothing')
  t.equal((await repo.online()).length, ids.length - 1)

  t.equal(await repo.storeReported(ids[0]!, '{"x":1}', LATER), true)
  t.equal(await repo.storeReported('scr_nope', '{}', LATER), false)
  const rep = await k.selectFrom('screens').select(['reported', 'reported_at']).where('id', '=', ids[0]!).executeTakeFirstOrThrow()
  t.same(rep, { reported: '{"x":1}', reported_at: LATER })

  // Many at once: one statement per 200 screens; a screen listed twice keeps its last entry.
  const many = ids.slice(0, 450).map((id, i) => ({ id, reported: `{"n":${i}}`, at: i % 2 ? AT : LATER, agentVersion: i % 3 ? `1.0.${i}` : null }))
  await repo.storeReportedMany([
    ...many,
    { id: ids[3]!, reported: '{"n":"last"}', at: LATER, agentVersion: '2.0.0' },
    { id: 'scr_nope', reported: '{}', at: LATER, agentVersion: null },
  ])
  const stored = new Map(
    (
      await k.selectFrom('screens').select(['id', 'reported', 'reported_at', 'last_seen_at', 'agent_version']).where('id', 'in', ids.slice(0, 451)).execute()
    ).map((r) => [r.id, r]),
  )
  t.ok(
    many.every(
      (m, i) =>
        i === 3 ||
        (stored.get(m.id)?.reported === m.reported &&
          stored.get(m.id)?.reported_at === m.at &&
          stored.get(m.id)?.last_seen_at === m.at &&
          stored.get(m.id)?.agent_version === m.agentVersion),
    ),
    'each screen got its own reported state, times and agent version (null where the report had none)',
  )
  t.same(stored.get(ids[3]!)?.reported, '{"n":"last"}', 'the later entry of a screen listed twice wins')
  t.equal(stored.get(ids[3]!)?.agent_version, '2.0.0')
  t.equal(stored.get(ids[450]!)?.reported, null, 'a screen not listed is untouched')
  await repo.storeReportedMany([])

  // Many offline at once (a sweep after a network cut): each screen gets its own `since`,
  // across IN-list chunks and several `since` values; the screen already offline and the
  // unknown one change nothing; every open presence interval ends at its screen's `since`.
  const DROP1 = '2026-06-01T12:10:00.000Z'
  const DROP2 = '2026-06-01T12:11:00.000Z'
  const off = ids.map((id, i) => ({ id, since: i % 3 ? DROP1 : DROP2 }))
  const gone = await repo.markOfflineMany([...off, { id: 'scr_nope', since: DROP1 }])
  t.same([...gone].sort(), ids.slice(1).sort(), 'every screen still online changed, only those')
  const after = await repo.rows(ids)
  t.ok(
    off.every((o, i) => after.get(o.id)?.status === 'offline' && after.get(o.id)?.status_since === (i === 0 ? LATER : o.since)),
    'each screen offline since its own drop (the one already offline keeps its own)',
  )
  t.same(await k.selectFrom('presence_intervals').select('screen_id').where('ended_at', 'is', null).execute(), [], 'no interval left open')
  const ended = new Map((await k.selectFrom('presence_intervals').select(['screen_id', 'ended_at']).execute()).map((r) => [r.screen_id, r.ended_at]))
  t.equal(ended.get(ids[4]!), DROP1)
  t.equal(ended.get(ids[1102]!), DROP1, 'a screen whose interval began later than the others')
  t.equal(ended.get(ids[1200]!), DROP2)
  t.same([...(await repo.markOfflineMany(off))], [], 'a second sweep changes nothing')
})
