// SQLite on a file keeps a second, read-only connection for `db.reads` (the screen
// list): it sees what has committed, it reads while the writer's
// connection is held by a transaction, it cannot write, and it closes with the database.
// In-memory SQLite and PostgreSQL read through the one handle.
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { migrate } from '../../src/platform/db/migrate.js'
import { openEngine, postgresUrl } from './engines.js'

const T0 = '2026-06-01T12:00:00.000Z'

t.test('a SQLite file: reads beside the writer, committed data only, read-only', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-reads-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const db = await SqliteDatabase.open(path.join(dir, 'svc.sqlite'), 1000)
  let closed = false
  t.after(() => (closed ? undefined : db.close()))
  await migrate(db)
  t.not(db.reads, db.kysely, 'a connection of its own')

  await db.kysely.insertInto('workspaces').values({ id: 'ws_1', name: 'One', region: 'us', created_at: T0 }).execute()
  const read = () => db.reads.selectFrom('workspaces').select('name').where('id', '=', 'ws_1').executeTakeFirst()
  t.same(await read(), { name: 'One' }, 'sees what has committed')

  // The writer's connection held by a transaction: the read still answers, with the
  // committed row, not the transaction's change.
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  let inside!: () => void
  const entered = new Promise<void>((r) => (inside = r))
  const tx = db.transaction(async (q) => {
    await q.kysely.updateTable('workspaces').set({ name: 'Two' }).where('id', '=', 'ws_1').execute()
    inside()
    await held
  })
  await entered
  t.same(await read(), { name: 'One' }, 'reads while a transaction holds the writer, and sees only what committed')
  release()
  await tx
  t.same(await read(), { name: 'Two' }, 'the commit is seen at the next read')

  await t.rejects(sql`DELETE FROM workspaces`.execute(db.reads), /readonly|read-only/i, 'it cannot write')

  await db.close()
  closed = true
  await t.rejects(read(), 'closed with the database')
})

t.test('in-memory SQLite and PostgreSQL: reads go through the one handle', async (t) => {
  const mem = await SqliteDatabase.open(':memory:', 1000)
  t.after(() => mem.close())
  t.equal(mem.reads, mem.kysely)
  if (!postgresUrl()) return
  const pg = await openEngine(t, 'postgres')
  t.equal(pg.reads, pg.kysely, 'PostgreSQL: the pool serves both')
})
