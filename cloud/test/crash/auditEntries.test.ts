// The audit log across a crash: a real cloud process answers a burst of writes (their entries
// appended by group commit) and is killed with SIGKILL the moment the last answer is in; every
// answered write's entry is in the database afterwards, and the chain verifies. (An entry
// written after its write's answer, or a batch still queued when the answers went out,
// would be missing here.)
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { AuditTrail } from '../../src/domains/audit/AuditTrail.js'
import { IdGenerator, systemClock } from '../../src/platform/clock.js'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { fixtureCloud } from '../fixtures/processes.js'

const WRITES = 30

t.test('kill -9 right after the answers: every answered write has its entry, and the chain verifies', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-audit-crash-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const cloud = await fixtureCloud('auditCloud.ts', [dir, String(WRITES)])
  t.after(() => cloud.child.kill('SIGKILL'))
  const exited = once(cloud.child, 'exit')
  const answered = JSON.parse((await cloud.lines.next()).value as string) as { step: string; workspaceId: string; statuses: number[]; requestIds: string[] }
  t.equal(answered.step, 'answered')
  t.same(new Set(answered.statuses), new Set([201]), 'every write succeeded')
  await exited
  t.equal(cloud.child.signalCode, 'SIGKILL', 'killed at once after the answers')

  const db = await SqliteDatabase.open(path.join(dir, 'svc.sqlite'), 2000)
  t.after(() => db.close())
  const rows = await db.all<{ request_id: string }>("SELECT request_id FROM audit_entries WHERE chain = ? AND action = 'playlist.create'", [
    answered.workspaceId,
  ])
  t.same(new Set(rows.map((r) => r.request_id)), new Set(answered.requestIds), 'each answered write has its entry')
  const verified = await new AuditTrail(db, systemClock, new IdGenerator(systemClock)).verify(answered.workspaceId)
  t.match(verified, { ok: true, firstBroken: null }, 'the chain verifies')
})
