// The audit log's trail alone, without HTTP: C writers each record an entry and wait for it
// (as the edge does before a write's answer), N entries in all, on a file SQLite database;
// C sets the batch size (C=1: one entry per batch; C=50: up to 50). Prints the process's
// CPU (all threads: the SQLite driver works on libuv's) per entry, twice (the first round
// warms up).
//   pnpm exec tsx bench/audit-trail.ts [N=5000]   (env: C=5)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AuditTrail } from '../cloud/src/domains/audit/AuditTrail.js'
import { diff } from '../cloud/src/domains/audit/changes.js'
import type { AuditRecord } from '../cloud/src/domains/audit/types.js'
import { IdGenerator, systemClock } from '../cloud/src/platform/clock.js'
import { migrate } from '../cloud/src/platform/db/migrate.js'
import { SqliteDatabase } from '../cloud/src/platform/db/SqliteDatabase.js'

const N = Number(process.argv[2] ?? 5000)
const C = Number(process.env.C ?? 5)
const dir = mkdtempSync(join(tmpdir(), 'svc-bench-audit-trail-'))
const db = await SqliteDatabase.open(join(dir, 'db.sqlite'), 5000)
await migrate(db)
const ids = new IdGenerator(systemClock)
const trail = new AuditTrail(db, systemClock, ids)
const at = new Date().toISOString()
// A playlist as POST /v1/playlists answers it: the entry's changes are its fields.
const view = { id: '', kind: 'playlist', name: 'Bench playlist', nodeId: null, items: [], createdAt: at, updatedAt: at, sharedWith: [], approval: null }
function entry(i: number): AuditRecord {
  return {
    workspaceId: 'ws_bench',
    actor: { kind: 'apiKey', id: 'key_bench', name: 'Bench' },
    via: 'api',
    action: 'playlist.create',
    resource: { kind: 'playlist', id: `pl_${i}`, name: 'Bench playlist' },
    nodeId: null,
    changes: diff(null, { ...view, id: `pl_${i}` }),
    requestId: `req_${i}`,
    ip: '127.0.0.1',
    outcome: 'success',
  }
}
for (let round = 1; round <= 2; round++) {
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < N) await trail.record(entry(next++))
    }),
  )
  const c = process.cpuUsage(c0)
  console.log(
    `round ${round}: C=${C}, ${N} entries, ${((c.user + c.system) / N).toFixed(0)} µs CPU per entry, ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )
}
console.log('verify', JSON.stringify(await trail.verify('ws_bench')))
await db.close()
rmSync(dir, { recursive: true, force: true })
