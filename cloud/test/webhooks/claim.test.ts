// The delivery claim with several workers on one database: every due delivery is claimed
// by exactly one of them, an unexpired lease is respected, and an expired one is taken
// over. On PostgreSQL the workers are separate pools claiming at the same moment (the
// sub-select skips rows another claim has locked); on SQLite separate connections to one file.
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ENGINES, openEngine, requirePostgres, freshPostgresSchema } from '../db/engines.js'
import { PostgresDatabase } from '../../src/platform/db/PostgresDatabase.js'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import type { Database } from '../../src/platform/db/Database.js'
import { migrate } from '../../src/platform/db/migrate.js'
import { WebhookRepository } from '../../src/domains/webhooks/WebhookRepository.js'

const T0 = '2026-06-01T12:00:00.000Z'

async function seed(db: Database, n: number): Promise<void> {
  await db.kysely.insertInto('workspaces').values({ id: 'ws', name: 'W', region: 'us', created_at: T0 }).execute()
  const repo = new WebhookRepository(db.kysely, db.dialect)
  for (let i = 0; i < n; i++) {
    await repo.insertDelivery({
      id: `d${String(i).padStart(4, '0')}`,
      workspace_id: 'ws',
      endpoint_id: 'ep',
      event: 'screen.offline',
      status: 'pending',
      occurred_at: T0,
      created_at: T0,
      next_attempt_at: T0,
      data: '{}',
    })
  }
}

for (const engine of ENGINES) {
  t.test(`four workers claiming at once share the due deliveries without overlap [${engine}]`, async (t) => {
    let dbs: Database[]
    if (engine === 'postgres') {
      const url = requirePostgres(t, `webhook claim with several workers [postgres]`)
      if (!url) return
      const schema = await freshPostgresSchema(t, url)
      dbs = await Promise.all([0, 1, 2, 3].map(() => PostgresDatabase.open(url, { busyTimeoutMs: 10_000, schema, max: 2 })))
    } else {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-claim-'))
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
      // Opened one after the other: four opens of a new file at once race to switch it to WAL,
      // and the loser is refused at once (SQLITE_BUSY, no wait). The claims below still race.
      dbs = []
      for (let i = 0; i < 4; i++) dbs.push(await SqliteDatabase.open(path.join(dir, 'db.sqlite'), 10_000))
    }
    t.after(() => Promise.all(dbs.map((d) => d.close())))
    await migrate(dbs[0]!)
    await seed(dbs[0]!, 200)
    const now = '2026-06-01T12:00:01.000Z'
    const lease = '2026-06-01T12:00:31.000Z'
    const repos = dbs.map((d) => new WebhookRepository(d.kysely, d.dialect))
    const seen = new Map<string, string>()
    // Rounds of simultaneous claims of 15 each until nothing is left.
    for (let round = 0; round < 20; round++) {
      const got = await Promise.all(repos.map((r, i) => r.claimDue(now, lease, `w${i}-r${round}`, 15)))
      let any = false
      got.forEach((rows, i) => {
        for (const row of rows) {
          any = true
          t.notOk(seen.has(row.id), `${row.id} claimed once (again by w${i})`)
          seen.set(row.id, `w${i}`)
          t.equal(row.claim_token, `w${i}-r${round}`)
        }
      })
      if (!any) break
    }
    t.equal(seen.size, 200, 'every due delivery was claimed')
    t.ok(new Set(seen.values()).size > 1, 'the work was shared')
    t.same(await repos[0]!.claimDue(now, lease, 'late', 15), [], 'live leases are respected')
    const after = await repos[1]!.claimDue('2026-06-01T12:00:31.000Z', '2026-06-01T12:01:01.000Z', 'takeover', 500)
    t.equal(after.length, 200, 'expired leases are claimed again')
  })
}

t.test('settle only with the current claim token', async (t) => {
  for (const engine of ENGINES) {
    if (engine === 'postgres' && !requirePostgres(t, 'settle with the claim token [postgres]')) continue
    const db = await openEngine(t, engine)
    await seed(db, 1)
    const repo = new WebhookRepository(db.kysely, db.dialect)
    const [d] = await repo.claimDue(T0, '2026-06-01T12:00:30.000Z', 'tok', 1)
    t.equal(await repo.settle(d!.id, 'other', { status: 'delivered' }), false, `${engine}: a stale token changes nothing`)
    t.equal(await repo.settle(d!.id, null, { status: 'delivered' }), false, `${engine}: no token changes nothing`)
    t.equal(await repo.settle(d!.id, 'tok', { status: 'delivered' }), true, `${engine}: the holder settles`)
    t.match(await repo.deliveryById(d!.id), { status: 'delivered', claim_token: null, claimed_until: null })
  }
})
