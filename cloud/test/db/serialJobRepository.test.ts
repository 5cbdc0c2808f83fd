// SerialJobRepository on both engines: the open jobs of one screen and of several at once
// (the batched read the connections of one tick share), oldest first, closed jobs left out.
import t from 'tap'
import { eachEngine } from './engines.js'
import { SerialJobRepository } from '../../src/domains/serial/SerialRepository.js'
import type { SerialJobRow } from '../../src/domains/serial/tables.js'
import { WorkspaceRepository } from '../../src/domains/account/WorkspaceRepository.js'

const row = (id: string, screenId: string, createdAt: string, status = 'queued'): SerialJobRow => ({
  id,
  workspace_id: 'ws_1',
  screen_id: screenId,
  bytes_hex: '0d',
  protocol: null,
  timeout_ms: null,
  template_id: null,
  item_id: null,
  status,
  reply_hex: null,
  sent_hex: null,
  reason: null,
  created_at: createdAt,
  sent_at: null,
  completed_at: null,
})

eachEngine(t, 'serial job repository: open jobs of several screens', async (t, db) => {
  await new WorkspaceRepository(db.kysely).insert({ id: 'ws_1', name: 'One', region: 'us', created_at: '2026-06-01T09:00:00.000Z' })
  const repo = new SerialJobRepository(db.kysely)
  await repo.insertMany([
    row('sj_1', 'scr_a', '2026-06-01T10:00:00.000Z'),
    row('sj_2', 'scr_a', '2026-06-01T10:05:00.000Z', 'sent'),
    row('sj_3', 'scr_b', '2026-06-01T10:06:00.000Z'),
    row('sj_4', 'scr_b', '2026-06-01T10:07:00.000Z', 'ok'),
    row('sj_5', 'scr_c', '2026-06-01T10:08:00.000Z', 'failed'),
  ])
  const many = await repo.openForMany(['scr_a', 'scr_b', 'scr_c', 'scr_none'])
  t.same(
    [...many].map(([id, rows]) => [id, rows.map((r) => r.id)]).sort(),
    [
      ['scr_a', ['sj_1', 'sj_2']],
      ['scr_b', ['sj_3']],
    ],
    'queued and sent jobs, per screen, oldest first; screens without open jobs are absent',
  )
  for (const id of ['scr_a', 'scr_b'])
    t.same(
      many.get(id)!.map((r) => r.id),
      (await repo.openFor(id)).map((r) => r.id),
      `${id}: the same list as its own read`,
    )
  t.same((await repo.openForMany(['scr_a', 'scr_b'], '2026-06-01T10:05:30.000Z')).get('scr_a'), undefined, 'createdSince leaves out the older ones')
  t.equal((await repo.openForMany([])).size, 0, 'no screens, nothing read')
})
