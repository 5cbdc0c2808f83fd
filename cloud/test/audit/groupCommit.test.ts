// The audit log's group commit, on both engines: the entries recorded in one turn of the
// event loop are appended in ONE transaction (not one each after the write's own), each
// chain stays one chain numbered 1…n that verifies, every entry has committed by the time
// its record() answers (what lets a write's answer go out after it), and an entry the
// database refuses takes none of the others in its batch with it.
import t from 'tap'
import { AuditTrail } from '../../src/domains/audit/AuditTrail.js'
import type { AuditRecord } from '../../src/domains/audit/types.js'
import { IdGenerator, ManualClock } from '../../src/platform/clock.js'
import type { Database } from '../../src/platform/db/Database.js'
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

/**
 * Counts the writes of audit entries on `db` from now on: transactions (PostgreSQL appends a
 * batch in one) and statements inserting entries outside any transaction (SQLite appends a
 * batch in one statement).
 */
function countAppends(db: Database): { readonly n: number } {
  const counter = { n: 0 }
  const transaction = db.transaction.bind(db)
  db.transaction = (fn) => {
    counter.n++
    return transaction(fn)
  }
  const run = db.run.bind(db)
  db.run = (sql, params) => {
    if (/^\s*insert into audit_entries\b/i.test(sql)) counter.n++
    return run(sql, params)
  }
  return counter
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
  // Every id is the same: the first entry takes it, the second is refused (a unique id).
  const ids = { next: () => 'aud_same' } as unknown as IdGenerator
  const trail = new AuditTrail(db, clock, ids)
  const [first, second] = await Promise.allSettled([trail.record(entry('ws_a', 1)), trail.record(entry('ws_a', 2))])
  t.equal(first!.status, 'fulfilled', 'the first entry is recorded')
  t.equal(second!.status, 'rejected', 'the duplicate is refused')
  t.same(await trail.verify('ws_a'), { ok: true, checked: 1, firstBroken: null }, 'the chain holds the one entry and verifies')
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
