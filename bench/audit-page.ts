// The audit log at volume (not a test): the app on a SQLite file with E entries (default
// 1,000,000) in one workspace's chain, seeded directly in batches (recording a million
// writes through the API would measure the writes, not the page), hashed as the trail hashes
// them so the chain is whole. Timed through the app (inject), R times each after a warm-up:
//   (a) the newest page, GET /v1/audit-log?limit=50;
//   (b) a page deep in the log (the cursor of the entry half-way);
//   (c) the newest page of one actor (one entry in 100);
//   (d) the newest page of one resource (10 entries).
// The figure is the median; the target is ≤ 50 ms for a page.
//   pnpm exec tsx bench/audit-page.ts [--entries=1000000] [--rounds=50]
import { join } from 'node:path'
import { buildApp, servicesOf } from '../cloud/src/app.js'
import { testConfig } from '../cloud/src/config.js'
import { contentOf, hashOf } from '../cloud/src/domains/audit/AuditTrail.js'
import { GENESIS } from '../cloud/src/domains/audit/AuditRepository.js'
import { encodeCursor } from '../cloud/src/platform/paging.js'
import { f1, loadAvg, now, pct, tempDir } from './lib/harness.js'

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback)

async function main(): Promise<void> {
  const E = arg('entries', 1_000_000)
  const R = arg('rounds', 50)
  const dir = tempDir('svc-bench-audit-')
  const app = await buildApp(testConfig({ dataDir: dir, dbFile: join(dir, 'svc.sqlite') }))
  try {
    const { workspaces, apiKeys, db } = servicesOf(app)
    const ws = await workspaces.create('Bench', 'us')
    const { secret } = await apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
    const seeded = now()
    let prev = GENESIS
    // The chain's head first: on SQLite each inserted entry must follow it (migration 0643).
    await db.run('INSERT INTO audit_chains (chain, head_seq, head_hash, anchor_seq, anchor_hash) VALUES (?, 0, ?, 0, ?)', [ws.id, GENESIS, GENESIS])
    const BATCH = 1000
    const cols =
      'chain, seq, id, at, actor_kind, actor_id, actor_name, via, action, resource_kind, resource_id, resource_name, node_id, changes, request_id, ip, outcome, prev_hash, hash'
    const start = Date.parse('2026-01-01T00:00:00Z')
    for (let from = 1; from <= E; from += BATCH) {
      const values: (string | number | null)[] = []
      let n = 0
      for (let seq = from; seq < from + BATCH && seq <= E; seq++, n++) {
        const base = {
          chain: ws.id,
          seq,
          id: `aud_${String(seq).padStart(12, '0')}`,
          at: new Date(start + seq * 1000).toISOString(),
          actor_kind: 'apiKey',
          actor_id: `key_${seq % 100}`,
          actor_name: 'Bench key',
          via: 'api',
          action: 'playlist.update',
          resource_kind: 'playlist',
          resource_id: `pl_${Math.floor(seq / 10)}`,
          resource_name: 'Lobby loop',
          node_id: null,
          changes: JSON.stringify([{ path: 'name', before: 'Lobby', after: 'Lobby loop' }]),
          request_id: `req_${seq}`,
          ip: '127.0.0.1',
          outcome: 'success',
        }
        const hash = hashOf(prev, contentOf(base))
        values.push(...Object.values(base), prev, hash)
        prev = hash
      }
      const row = `(${cols
        .split(',')
        .map(() => '?')
        .join(', ')})`
      await db.transaction((tx) => tx.run(`INSERT INTO audit_entries (${cols}) VALUES ${new Array(n).fill(row).join(', ')}`, values))
    }
    // The head as the entries left it (on SQLite the append triggers already moved it).
    await db.run('UPDATE audit_chains SET head_seq = ?, head_hash = ? WHERE chain = ?', [E, prev, ws.id])
    console.log(`${E} entries seeded in ${f1((now() - seeded) / 1000)} s; load average ${await loadAvg()}`)

    const auth = { authorization: `Bearer ${secret}` }
    const cases: [string, string][] = [
      ['newest page (limit=50)', '/v1/audit-log?limit=50'],
      ['a page half-way (cursor)', `/v1/audit-log?limit=50&cursor=${encodeCursor(String(Math.floor(E / 2)))}`],
      ['one actor (1 entry in 100)', '/v1/audit-log?limit=50&actorId=key_7'],
      ['one resource (10 entries)', `/v1/audit-log?limit=50&resourceId=pl_${Math.floor(E / 20)}`],
    ]
    console.log('| page over the audit log | median | p95 |')
    console.log('| --- | --- | --- |')
    for (const [name, url] of cases) {
      const first = await app.inject({ method: 'GET', url, headers: auth })
      if (first.statusCode !== 200 || first.json().data.length === 0) throw new Error(`${name}: ${first.statusCode} ${first.body.slice(0, 200)}`)
      const times: number[] = []
      for (let i = 0; i < R; i++) {
        const t0 = now()
        const res = await app.inject({ method: 'GET', url, headers: auth })
        times.push(now() - t0)
        if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode}`)
      }
      times.sort((a, b) => a - b)
      console.log(`| ${name} | ${f1(pct(times, 50))} ms | ${f1(pct(times, 95))} ms |`)
    }
  } finally {
    await app.close()
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  },
)
