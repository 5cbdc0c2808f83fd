// What SQLite's side of an audit entry costs, by schema variant (not a test): batches of B
// entries appended to a file SQLite database through the product's SQLite layer (kept
// statements, libuv's pool), either each batch in a statement of its own (autocommit, as the
// trail's own turn) or riding in a transaction that also inserts a playlist-like row (as the
// trail's entries ride in the next writer's transaction; RIDE=1). Prints the process's CPU
// (all threads) per entry, the minimum over REPS repetitions, the variants interleaved so
// the machine's load falls on all alike. The rows are hashed and linked as the trail links
// them, so the triggers take them.
//   pnpm exec tsx bench/audit-row-cost.ts [variant…]   (env: B=5  N=10000  REPS=3  RIDE=1)
// With RIDE=1 the variant `none` is the carrying transaction without any entry.
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SqlValue } from '../cloud/src/platform/db/Database.js'
import { SqliteDatabase } from '../cloud/src/platform/db/SqliteDatabase.js'

const B = Number(process.env.B ?? 5)
const N = Number(process.env.N ?? 10_000)
const REPS = Number(process.env.REPS ?? 3)
const RIDE = process.env.RIDE === '1'
const COLS =
  'chain, seq, id, at, actor_kind, actor_id, actor_name, via, action, resource_kind, resource_id, resource_name, node_id, changes, request_id, ip, outcome, prev_hash, hash'.split(
    ', ',
  )
const TABLE = `CREATE TABLE audit_entries (chain TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, at TEXT NOT NULL, actor_kind TEXT NOT NULL,
  actor_id TEXT, actor_name TEXT, via TEXT NOT NULL, action TEXT NOT NULL, resource_kind TEXT NOT NULL, resource_id TEXT, resource_name TEXT,
  node_id TEXT, changes TEXT NOT NULL, request_id TEXT, ip TEXT, outcome TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (chain, seq))`
const INDEXES = {
  actor: 'CREATE INDEX audit_entries_actor ON audit_entries(chain, actor_id, seq)',
  resource: 'CREATE INDEX audit_entries_resource ON audit_entries(chain, resource_id, seq)',
  at: 'CREATE INDEX audit_entries_at ON audit_entries(chain, at)',
}
const CHAINS =
  'CREATE TABLE audit_chains (chain TEXT PRIMARY KEY, head_seq INTEGER NOT NULL, head_hash TEXT NOT NULL, anchor_seq INTEGER NOT NULL, anchor_hash TEXT NOT NULL)'
/** Migration 0643: a trigger to check the head, one to move it. */
const TWO_TRIGGERS = [
  `CREATE TRIGGER audit_entries_follow_head BEFORE INSERT ON audit_entries BEGIN SELECT RAISE(ABORT, 'not next')
   WHERE NOT EXISTS (SELECT 1 FROM audit_chains WHERE chain = NEW.chain AND head_seq = NEW.seq - 1 AND head_hash = NEW.prev_hash); END`,
  'CREATE TRIGGER audit_entries_move_head AFTER INSERT ON audit_entries BEGIN UPDATE audit_chains SET head_seq = NEW.seq, head_hash = NEW.hash WHERE chain = NEW.chain; END',
]
/** Migration 0645: one trigger that moves the head only from the row's predecessor. */
const ONE_TRIGGER = [
  `CREATE TRIGGER audit_entries_next BEFORE INSERT ON audit_entries BEGIN
   UPDATE audit_chains SET head_seq = NEW.seq, head_hash = NEW.hash WHERE chain = NEW.chain AND head_seq = NEW.seq - 1 AND head_hash = NEW.prev_hash;
   SELECT RAISE(ABORT, 'not next') WHERE changes() = 0; END`,
]
const FROM_JSON = `INSERT INTO audit_entries (${COLS.join(', ')}) SELECT ${COLS.map((_, i) => `value ->> ${i}`).join(', ')} FROM json_each(?) ORDER BY key`
const BOUND = `INSERT INTO audit_entries (${COLS.join(', ')}) VALUES ${Array.from({ length: B }, () => `(${COLS.map(() => '?').join(', ')})`).join(', ')}`

interface Variant {
  indexes: (keyof typeof INDEXES)[]
  triggers: string[]
  bound: boolean
  none?: boolean
}
const ALL: (keyof typeof INDEXES)[] = ['actor', 'resource', 'at']
const VARIANTS: Record<string, Variant> = {
  /** The schema and statement of 0644 (two triggers, rows from JSON). */
  before: { indexes: ALL, triggers: TWO_TRIGGERS, bound: false },
  oneTrigger: { indexes: ALL, triggers: ONE_TRIGGER, bound: false },
  /** The schema and statement after 0645 (one trigger, values bound). */
  after: { indexes: ALL, triggers: ONE_TRIGGER, bound: true },
  noTriggers: { indexes: ALL, triggers: [], bound: true },
  noAtIndex: { indexes: ['actor', 'resource'], triggers: ONE_TRIGGER, bound: true },
  noIndexes: { indexes: [], triggers: ONE_TRIGGER, bound: true },
  none: { indexes: ALL, triggers: ONE_TRIGGER, bound: true, none: true },
}

async function price(v: Variant): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-audit-row-'))
  const db = await SqliteDatabase.open(join(dir, 'db.sqlite'), 5000)
  try {
    await db.run(
      'CREATE TABLE playlists (id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT, updated_at TEXT)',
    )
    await db.run('CREATE INDEX playlists_ws ON playlists(workspace_id, name)')
    for (const s of [TABLE, CHAINS, ...v.indexes.map((k) => INDEXES[k]), ...v.triggers]) await db.run(s)
    const genesis = '0'.repeat(64)
    await db.run("INSERT INTO audit_chains VALUES ('ws_bench', 0, ?, 0, ?)", [genesis, genesis])
    const t0 = Date.parse('2026-12-03T00:00:00Z')
    const changes = JSON.stringify([
      { path: 'id', before: null, after: 'pl_01JZZZZZZZZZZZZZZZZZZZZZZZ' },
      { path: 'name', before: null, after: 'Bench playlist' },
      { path: 'createdAt', before: null, after: new Date(t0).toISOString() },
    ])
    let seq = 0
    let prev = genesis
    const batch = (): SqlValue[][] => {
      const rows: SqlValue[][] = []
      for (let i = 0; i < B; i++) {
        seq++
        const hash = createHash('sha256').update(`${prev}\n${seq}`).digest('hex')
        const id = String(seq).padStart(20, '0')
        const at = new Date(t0 + seq).toISOString()
        rows.push([
          'ws_bench',
          seq,
          `aud_${id}`,
          at,
          'apiKey',
          'key_bench',
          'Bench',
          'api',
          'playlist.create',
          'playlist',
          `pl_${id}`,
          'Bench playlist',
          null,
          changes,
          `req-${seq}`,
          '127.0.0.1',
          'success',
          prev,
          hash,
        ])
        prev = hash
      }
      return rows
    }
    let pk = 0
    const append = async (rows: SqlValue[][]) => {
      const write = (q: Pick<SqliteDatabase, 'run'>) => (v.bound ? q.run(BOUND, rows.flat()) : q.run(FROM_JSON, [JSON.stringify(rows)]))
      if (!RIDE) return void (await write(db))
      await db.transaction(async (tx) => {
        const now = new Date(t0 + pk).toISOString()
        await tx.run('INSERT INTO playlists (id, workspace_id, name, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [
          `pl_${++pk}`,
          'ws_bench',
          'Bench playlist',
          '{"items":[]}',
          now,
          now,
        ])
        if (!v.none) await write(tx)
      })
    }
    for (let k = 0; k < 2000 / B; k++) await append(batch())
    const batches = Array.from({ length: N / B }, batch)
    const c0 = process.cpuUsage()
    for (const rows of batches) await append(rows)
    const c = process.cpuUsage(c0)
    return (c.user + c.system) / N
  } finally {
    await db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const names = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(VARIANTS).filter((n) => RIDE || n !== 'none')
const best: Record<string, number> = {}
for (let r = 0; r < REPS; r++) for (const n of names) best[n] = Math.min(best[n] ?? Number.POSITIVE_INFINITY, await price(VARIANTS[n]!))
const load = (await import('node:os')).loadavg().map((x) => x.toFixed(1))
console.log(
  `B=${B} N=${N} ${RIDE ? 'riding in a transaction' : 'a statement of its own'}; µs CPU per entry (all threads), min of ${REPS}; load average ${load.join(' ')}`,
)
for (const n of names) console.log(`  ${n.padEnd(11)} ${best[n]!.toFixed(1)}`)
process.exit(0)
