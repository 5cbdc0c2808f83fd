// The active emergencies holding a batch of screens (the read behind every desired state),
// on both engines: only active emergencies' active rows, newest first per screen, however
// many cleared emergencies the workspace has. On SQLite the read is driven from the screens'
// active rows (the emergency_screens(screen_id, active) index), not from the workspace's
// emergencies: joined that way round it walked every emergency ever started, cleared ones
// too, for each batch, and each fan-out cost more than the one before.
import t from 'tap'
import { sql } from 'kysely'
import { eachEngine } from './engines.js'
import { EmergencyRepository, heldByQuery, type EmergencyRecord } from '../../src/domains/takeovers/EmergencyRepository.js'

const WS = 'ws_1'
const at = (n: number) => new Date(Date.UTC(2026, 5, 1, 12, 0, n)).toISOString()

const row = (id: string, n: number, status: 'active' | 'cleared'): EmergencyRecord => ({
  id,
  workspace_id: WS,
  node_id: null,
  content_kind: n % 2 ? null : 'media',
  content_id: n % 2 ? null : 'med_1',
  content_name: null,
  message: `m${n}`,
  scope_kind: 'all',
  scope_node_id: null,
  scope_group_id: null,
  status,
  screen_count: 2,
  screens_released: null,
  started_at: at(n),
  cleared_at: status === 'cleared' ? at(n + 1) : null,
  created_by: 'key:k',
  cleared_by: null,
  reach_at: null,
  presentation: 'fullscreen',
  source_cap_feed_id: null,
  source_cap_alert_id: null,
  alert: null,
})

eachEngine(t, 'heldBy: active emergencies only, newest first, driven from the screens', async (t, db, engine) => {
  const k = db.kysely
  await k
    .insertInto('workspaces')
    .values({ id: WS, name: 'W', region: 'us', created_at: at(0) })
    .execute()
  // 60 emergencies that came and went (their rows inactive), then two active ones.
  for (let n = 0; n < 60; n++) {
    await k
      .insertInto('emergencies')
      .values(row(`emg_old${n}`, n, 'cleared'))
      .execute()
    await k
      .insertInto('emergency_screens')
      .values(['scr_a', 'scr_b'].map((s) => ({ emergency_id: `emg_old${n}`, screen_id: s, active: 0 })))
      .execute()
  }
  await k
    .insertInto('emergencies')
    .values([row('emg_1', 100, 'active'), row('emg_2', 101, 'active')])
    .execute()
  await k
    .insertInto('emergency_screens')
    .values([
      { emergency_id: 'emg_1', screen_id: 'scr_a', active: 1 },
      { emergency_id: 'emg_1', screen_id: 'scr_b', active: 1 },
      { emergency_id: 'emg_2', screen_id: 'scr_a', active: 1 },
    ])
    .execute()
  const held = await new EmergencyRepository(k).heldBy(WS, ['scr_a', 'scr_b', 'scr_c'])
  t.same(
    held.map((h) => [h.screen_id, h.id, h.content_kind]),
    [
      ['scr_a', 'emg_2', null],
      ['scr_a', 'emg_1', 'media'],
      ['scr_b', 'emg_1', 'media'],
    ],
  )
  t.same(await new EmergencyRepository(k).heldBy('ws_other', ['scr_a']), [], 'another workspace holds nothing')

  if (engine === 'sqlite') {
    const q = heldByQuery(k, WS, ['scr_a', 'scr_b']).compile()
    const plan = (await sql.raw<{ detail: string }>(`EXPLAIN QUERY PLAN ${q.sql}`).execute(k)).rows.map((r) => r.detail)
    t.match(
      plan[0],
      /^SEARCH es USING (COVERING )?INDEX emergency_screens_screen \(screen_id=\? AND active=\?\)/,
      `driven from the screens' rows: ${plan.join(' | ')}`,
    )
    t.match(plan[1], /^SEARCH e USING .*\bid=\?\)/, 'then each emergency by its id, not every emergency of the workspace')
  }
})
