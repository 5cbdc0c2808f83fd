// The screen list's page statement on both engines: items in id order even when the rows
// are stored in another order (an aggregate is not promised to read an ordered subquery's
// rows in that order: the aggregate orders them itself).
import t from 'tap'
import { eachEngine } from './engines.js'
import { ScreenRepository } from '../../src/domains/screens/ScreenRepository.js'
import { WorkspaceRepository } from '../../src/domains/account/WorkspaceRepository.js'

const T0 = '2026-06-01T12:00:00.000Z'
const T1 = '2026-06-01T12:00:01.000Z'

eachEngine(t, 'the items come in id order even when the rows are stored in another order', async (t, db) => {
  await new WorkspaceRepository(db.kysely).insert({ id: 'ws_1', name: 'One', region: 'us', created_at: T0 })
  const screens = new ScreenRepository(db.kysely)
  // Inserted in descending id order, then every other one rewritten (PostgreSQL writes an
  // updated row's new version elsewhere): storage order is neither id order nor its reverse.
  const ids = Array.from({ length: 60 }, (_, i) => `scr_${String(i).padStart(3, '0')}`)
  for (const id of [...ids].reverse())
    await screens.insert({ id, workspace_id: 'ws_1', node_id: null, name: `n${id}`, model: null, serial_number: null, created_at: T0, updated_at: T0 })
  for (let i = 0; i < ids.length; i += 2) await screens.rename('ws_1', ids[i]!, { name: `moved ${ids[i]}`.padEnd(300, '.'), node_id: null, updated_at: T1 })
  for (const limit of [null, 7, 60]) {
    let after: string | null = null
    const seen: string[] = []
    for (let pages = 0; pages < 20; pages++) {
      const page = await screens.listJson(db.dialect, 'ws_1', null, { limit, after, count: false })
      seen.push(...(JSON.parse(page.data) as { id: string }[]).map((s) => s.id))
      if (!page.more || limit === null) break
      after = page.lastId
    }
    t.same(seen, ids, `limit ${limit}: every screen once, ascending`)
  }
  const scoped = await screens.listJson(db.dialect, 'ws_1', [], { limit: null, after: null, count: false })
  t.equal(scoped.data, '[]')
})
