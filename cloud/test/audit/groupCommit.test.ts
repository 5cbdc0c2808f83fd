// The audit log's group commit, on both engines: the entries recorded in one turn of the
// event loop are appended in ONE transaction (not one each after the write's own), each
// chain stays one chain numbered 1…n that verifies, every entry has committed by the time
// its record() answers (what lets a write's answer go out after it), and an entry the
// database refuses takes none of the others in its batch with it. On SQLite the entries
// waiting when another writer's transaction commits ride in that transaction; a carrying
// transaction rolled back after all, or a batch refused inside it, leaves the entries to
// the trail's own turn and the transaction's own writes as they were.
import t from 'tap'
import { HANG_GUARD_MS } from '@svc/shared/testing'
import { AuditTrail } from '../../src/domains/audit/AuditTrail.js'
import { BOUND_ROWS } from '../../src/domains/audit/AuditRepository.js'
import type { AuditRecord } from '../../src/domains/audit/types.js'
import { IdGenerator, ManualClock } from '../../src/platform/clock.js'
import type { Database, Queryable } from '../../src/platform/db/Database.js'
import { eachEngine } from '../db/engines.js'

function entry(workspaceId: string, i: number): AuditRecord {
  return {
    workspaceId,
    actor: { kind: 'user', id: 'usr_1', name: 'Ann' },
    via: 'api',
    action: 'playlist.create',
    resource: { kind: 'playlist', id: `pl_${i}`, name: `Playlist ${i}` },
    nodeId: null,
    changes: [{ path: 'name', before: null, after: `Playlist ${i}` }],
    requestId: `req-${i}`,
    ip: '127.0.0.1',
    outcome: 'success',
  }
}

const INSERTS_ENTRIES = /^\s*insert into audit_entries\b/i

/**
 * Counts the writes of audit entries on `db` from now on: transactions (PostgreSQL appends a
 * batch in one) and statements inserting entries outside any transaction (SQLite appends a
 * batch in one statement, in the trail's own turn on the writer: `exclusive`). Entries
 * carried by another writer's transaction are not counted; `statements` counts the latter alone.
 */
function countAppends(db: Database): { readonly n: number; readonly statements: number } {
  const counter = { n: 0, statements: 0 }
  const transaction = db.transaction.bind(db)
  db.transaction = (fn) => {
    counter.n++
    return transaction(fn)
  }
  const run = db.run.bind(db)
  db.run = (sql, params) => {
    if (INSERTS_ENTRIES.test(sql)) {
      counter.n++
      counter.statements++
    }
    return run(sql, params)
  }
  const exclusive = db.exclusive.bind(db)
  db.exclusive = (fn) =>
    exclusive((q) => {
      const counted = Object.create(q) as Queryable
      counted.run = (sql, params) => {
        if (INSERTS_ENTRIES.test(sql)) {
          counter.n++
          counter.statements++
        }
        return q.run(sql, params)
      }
      return fn(counted)
    })
  return counter
}

/** `p`, or a failure naming what was awaited once the shared hang guard runs out (not a timing). */
async function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up waiting for ${what}`)), HANG_GUARD_MS)
  })
  try {
    return await Promise.race([p, guard])
  } finally {
    clearTimeout(timer)
  }
}

const N = 60

eachEngine(t, 'entries recorded in one turn are appended in one write, two chains, each verified', async (t, db) => {
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const trail = new AuditTrail(db, clock, new IdGenerator(clock))
  const appends = countAppends(db)
  const answers = await Promise.all(Array.from({ length: N }, (_, i) => trail.record(entry(i % 3 === 0 ? 'ws_b' : 'ws_a', i))))
  t.equal(appends.n, 1, `${N} entries, one write (a transaction on PostgreSQL, a statement on SQLite)`)
  // Committed by the time record() answered: read back outside any transaction.
  for (const ws of ['ws_a', 'ws_b']) {
    const rows = await db.all<{ seq: unknown; request_id: string }>('SELECT seq, request_id FROM audit_entries WHERE chain = ? ORDER BY seq', [ws])
    const mine = answers.filter((a, i) => a && (i % 3 === 0) === (ws === 'ws_b'))
    t.same(
      rows.map((r) => Number(r.seq)),
      mine.map((_, k) => k + 1),
      `${ws}: one chain, 1…n in the order recorded`,
    )
    t.same(
      rows.map((r) => r.request_id),
      mine.map((a) => a!.requestId),
      `${ws}: the entries answered are the entries stored`,
    )
    t.same(await trail.verify(ws), { ok: true, checked: mine.length, firstBroken: null }, `${ws} verifies`)
  }
  // A later turn appends after what the first one wrote, in one write again.
  const before = appends.n
  const next = await trail.record(entry('ws_a', N))
  t.equal(next!.seq, N - N / 3 + 1, 'the next entry follows the head the batch left')
  t.equal(appends.n - before, 1, 'one write for the next batch')
  t.same(await trail.verify('ws_a'), { ok: true, checked: N - N / 3 + 1, firstBroken: null })
})

eachEngine(t, 'an entry the database refuses fails alone; the others of its batch are kept', async (t, db) => {
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const trail = new AuditTrail(db, clock, new IdGenerator(clock))
  // An action the table refuses (NOT NULL), between two good entries of the same batch.
  const bad = { ...entry('ws_a', 2), action: null as unknown as string }
  const [first, second, third] = await Promise.allSettled([trail.record(entry('ws_a', 1)), trail.record(bad), trail.record(entry('ws_a', 3))])
  t.equal(first!.status, 'fulfilled', 'the first entry is recorded')
  t.equal(second!.status, 'rejected', 'the refused entry fails')
  t.equal(third!.status, 'fulfilled', 'the entry after it is recorded')
  t.same(await trail.verify('ws_a'), { ok: true, checked: 2, firstBroken: null }, 'the chain holds the two entries and verifies')
})

eachEngine(t, 'a verification while writes go on walks the chain up to the head it read: no false break', async (t, db) => {
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const trail = new AuditTrail(db, clock, new IdGenerator(clock))
  await Promise.all(Array.from({ length: 20 }, (_, i) => trail.record(entry('ws_a', i))))
  // The verification reads the head, then the entries; the batch recorded meanwhile is
  // appended between the two reads.
  const verified = trail.verify('ws_a')
  const more = Promise.all(Array.from({ length: 20 }, (_, i) => trail.record(entry('ws_a', 100 + i))))
  const [during] = await Promise.all([verified, more])
  t.equal(during.ok, true, JSON.stringify(during))
  t.ok(during.checked >= 20, `checked up to the head it read (${during.checked})`)
  t.same(await trail.verify('ws_a'), { ok: true, checked: 40, firstBroken: null }, 'afterwards, the whole chain')
})

eachEngine(t, 'two trails on one database (two instances) take turns on one chain: each continues from the head the other left', async (t, db) => {
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const a = new AuditTrail(db, clock, new IdGenerator(clock))
  const b = new AuditTrail(db, clock, new IdGenerator(clock))
  const appends = countAppends(db)
  const seqs: number[] = []
  // Each trail's batch follows the other's: on SQLite the head a trail last wrote is stale by
  // then, the append is refused by the database and built again from the head read afresh.
  for (let i = 0; i < 6; i++) {
    const trail = i % 2 ? b : a
    const batch = await Promise.all(Array.from({ length: 4 }, (_, k) => trail.record(entry('ws_a', 4 * i + k))))
    seqs.push(...batch.map((e) => e!.seq))
  }
  t.same(
    seqs,
    Array.from({ length: 24 }, (_, i) => i + 1),
    'one chain, 1…24 in the order recorded',
  )
  t.same(await a.verify('ws_a'), { ok: true, checked: 24, firstBroken: null }, 'the chain verifies')
  // A batch refused for a stale head is appended whole on its second try, not an entry at a time.
  t.ok(appends.n <= 2 * 6, `at most two writes per batch (${appends.n} for 6 batches)`)
})

eachEngine(
  t,
  'SQLite: the database itself takes an entry only as the next of its chain (a row not following the head is refused, the head moves with the row)',
  async (t, db, engine) => {
    if (engine !== 'sqlite') {
      t.pass('PostgreSQL appends under the head locked in a transaction')
      return
    }
    const clock = new ManualClock('2026-06-01T12:00:00.000Z')
    const trail = new AuditTrail(db, clock, new IdGenerator(clock))
    const first = (await trail.record(entry('ws_a', 1)))!
    const row = await db.get<Record<string, unknown>>('SELECT * FROM audit_entries WHERE id = ?', [first.id])
    const cols = Object.keys(row!)
    const insert = (r: Record<string, unknown>) =>
      db.run(
        `INSERT INTO audit_entries (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
        cols.map((c) => r[c] as string | number | null),
      )
    await t.rejects(insert({ ...row, id: 'aud_gap', seq: 3, prev_hash: first.hash }), /not the next entry of its chain/, 'a gap in the numbers is refused')
    await t.rejects(insert({ ...row, id: 'aud_link', seq: 2, prev_hash: 'f'.repeat(64) }), /not the next entry of its chain/, 'a wrong link is refused')
    t.same(await trail.verify('ws_a'), { ok: true, checked: 1, firstBroken: null }, 'nothing of the refused rows stayed; the chain verifies')
    const head = await db.get<{ head_seq: unknown; head_hash: string }>('SELECT head_seq, head_hash FROM audit_chains WHERE chain = ?', ['ws_a'])
    t.same({ seq: Number(head!.head_seq), hash: head!.head_hash }, { seq: 1, hash: first.hash }, 'the head is the one entry')
    const second = (await trail.record(entry('ws_a', 2)))!
    t.equal(second.seq, 2, 'the trail appends after it')
  },
)

eachEngine(t, 'SQLite: entries waiting when another writer commits ride in its transaction, with no turn of their own', async (t, db, engine) => {
  if (engine !== 'sqlite') {
    t.pass('PostgreSQL appends a batch in a transaction of its own (a pool: no single writer to share)')
    return
  }
  await db.run('CREATE TABLE audit_ride_probe (id TEXT PRIMARY KEY)')
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const trail = new AuditTrail(db, clock, new IdGenerator(clock))
  await trail.record(entry('ws_a', 0))
  const appends = countAppends(db)
  // Recorded, then another writer's transaction begun in the same turn: it has the writer
  // before the trail's own turn, and carries the entries.
  const recorded = Promise.all(Array.from({ length: 5 }, (_, i) => trail.record(entry('ws_a', 1 + i))))
  const written = db.transaction((tx) => tx.run('INSERT INTO audit_ride_probe (id) VALUES (?)', ['w1']))
  await within(written, "the other writer's transaction")
  const answers = await within(recorded, 'the entries carried by the transaction')
  t.equal(appends.statements, 0, 'no statement of their own: the transaction carried them')
  t.same(
    answers.map((a) => a!.seq),
    [2, 3, 4, 5, 6],
    'they follow the chain',
  )
  t.same(await db.all('SELECT id FROM audit_ride_probe'), [{ id: 'w1' }], "the transaction's own write committed with them")
  t.same(await trail.verify('ws_a'), { ok: true, checked: 6, firstBroken: null }, 'the chain verifies')
  // Alone, with no transaction to ride in, the trail writes them in its own turn.
  const alone = await within(trail.record(entry('ws_a', 7)), 'an entry with no transaction to ride in')
  t.equal(alone!.seq, 7)
  t.equal(appends.statements, 1, 'one statement of its own')
})

eachEngine(t, 'SQLite: a carrying transaction rolled back at its COMMIT loses none of the entries it carried', async (t, db, engine) => {
  if (engine !== 'sqlite') {
    t.pass('PostgreSQL appends a batch in a transaction of its own')
    return
  }
  await db.run('CREATE TABLE audit_ride_parent (id TEXT PRIMARY KEY)')
  await db.run('CREATE TABLE audit_ride_child (id TEXT PRIMARY KEY, parent TEXT REFERENCES audit_ride_parent (id) DEFERRABLE INITIALLY DEFERRED)')
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const trail = new AuditTrail(db, clock, new IdGenerator(clock))
  const recorded = Promise.all(Array.from({ length: 4 }, (_, i) => trail.record(entry('ws_a', i))))
  // The child names no parent: the deferred foreign key refuses the COMMIT, after the
  // entries were written inside the transaction, and everything in it is rolled back.
  const refused = db.transaction((tx) => tx.run('INSERT INTO audit_ride_child (id, parent) VALUES (?, ?)', ['c1', 'missing']))
  await t.rejects(within(refused, 'the refused transaction'), /FOREIGN KEY/, 'the COMMIT is refused')
  const answers = await within(recorded, 'the entries of the rolled-back transaction, written again')
  t.same(
    answers.map((a) => a!.seq),
    [1, 2, 3, 4],
    'each entry recorded once, 1…4',
  )
  t.same(await db.all('SELECT id FROM audit_ride_child'), [], "nothing of the transaction's own write")
  t.equal(Number((await db.get<{ n: unknown }>("SELECT COUNT(*) AS n FROM audit_entries WHERE chain = 'ws_a'"))!.n), 4, 'four entries stored')
  t.same(await trail.verify('ws_a'), { ok: true, checked: 4, firstBroken: null }, 'the chain verifies')
})

eachEngine(
  t,
  "SQLite: an entry refused inside a carrying transaction fails alone; the transaction's own write and the other entries are kept",
  async (t, db, engine) => {
    if (engine !== 'sqlite') {
      t.pass('PostgreSQL appends a batch in a transaction of its own')
      return
    }
    await db.run('CREATE TABLE audit_ride_probe (id TEXT PRIMARY KEY)')
    const clock = new ManualClock('2026-06-01T12:00:00.000Z')
    const trail = new AuditTrail(db, clock, new IdGenerator(clock))
    // An action the table refuses (NOT NULL): the batch's one statement is refused inside the transaction.
    const bad = { ...entry('ws_a', 1), action: null as unknown as string }
    const recorded = Promise.allSettled([trail.record(entry('ws_a', 0)), trail.record(bad), trail.record(entry('ws_a', 2))])
    await within(
      db.transaction((tx) => tx.run('INSERT INTO audit_ride_probe (id) VALUES (?)', ['w1'])),
      "the carrying writer's transaction",
    )
    const [first, second, third] = await within(recorded, 'the entries, written alone')
    t.same(await db.all('SELECT id FROM audit_ride_probe'), [{ id: 'w1' }], "the transaction's own write committed")
    t.equal(first!.status, 'fulfilled')
    t.equal(second!.status, 'rejected', 'the refused entry fails')
    t.equal(third!.status, 'fulfilled')
    t.same(await trail.verify('ws_a'), { ok: true, checked: 2, firstBroken: null }, 'the chain holds the other two and verifies')
  },
)

eachEngine(t, 'the stored hash covers the row as contentOf writes it, whatever its fields hold, in batches bound and sent whole', async (t, db) => {
  const { contentOf, hashOf } = await import('../../src/domains/audit/AuditTrail.js')
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const trail = new AuditTrail(db, clock, new IdGenerator(clock))
  const odd = (i: number): AuditRecord => ({
    workspaceId: 'ws_odd',
    actor: { kind: i % 2 ? 'anonymous' : 'user', id: i % 2 ? null : 'usr_"1"', name: i % 2 ? null : 'Zoë \\ "Q" \n Ω 🚀' },
    via: 'api',
    action: 'playlist.update',
    resource: { kind: 'playlist', id: `pl_${i}`, name: i % 3 ? null : `Line\u2028${i}\t"x"` },
    nodeId: i % 4 ? null : 'nod_1',
    changes: [{ path: 'name', before: '\u0000"a"', after: { nested: [i, null, 'ü'] } }],
    requestId: i % 5 ? `req-${i}` : null,
    ip: i % 2 ? null : '::1',
    outcome: i % 7 ? 'success' : 'failed',
  })
  // Batch sizes on either side of where SQLite stops binding the values.
  let i = 0
  for (const size of [1, 9, BOUND_ROWS, BOUND_ROWS + 1, 2 * BOUND_ROWS + 6]) await Promise.all(Array.from({ length: size }, () => trail.record(odd(i++))))
  const rows = await db.all<Record<string, unknown>>('SELECT * FROM audit_entries WHERE chain = ? ORDER BY seq', ['ws_odd'])
  t.equal(rows.length, i, 'every entry stored')
  const mismatched = rows.filter((r) => {
    const row = { ...r, seq: Number(r.seq) } as Parameters<typeof contentOf>[0] & { prev_hash: string; hash: string }
    return hashOf(row.prev_hash, contentOf(row)) !== row.hash
  })
  t.same(mismatched, [], 'each hash is SHA-256 over the previous hash and contentOf(row)')
  t.same(await trail.verify('ws_odd'), { ok: true, checked: i, firstBroken: null })
})
