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

/** Counts the transactions run on `db` from now on. */
function countTransactions(db: Database): { readonly n: number } {
  const counter = { n: 0 }
  const original = db.transaction.bind(db)
  db.transaction = (fn) => {
    counter.n++
    return original(fn)
  }
  return counter
}

const N = 60

eachEngine(t, 'entries recorded in one turn are appended in one transaction, two chains, each verified', async (t, db) => {
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const trail = new AuditTrail(db, clock, new IdGenerator(clock))
  const transactions = countTransactions(db)
  const answers = await Promise.all(Array.from({ length: N }, (_, i) => trail.record(entry(i % 3 === 0 ? 'ws_b' : 'ws_a', i))))
  t.equal(transactions.n, 1, `${N} entries, one transaction`)
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
  // A later turn appends after what the first one wrote.
  const next = await trail.record(entry('ws_a', N))
  t.equal(next!.seq, N - N / 3 + 1, 'the next entry follows the head the batch left')
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
