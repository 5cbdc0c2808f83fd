// The tests' migrated SQLite template (./sqliteTemplate.ts): each fresh in-memory database is
// a copy holding every migration (nothing left for `migrate` to apply, the tables and the
// foreign keys there), each copy is a database of its own, its reads without ORDER BY come
// back reversed (on a file, on both connections), and `copyOf` is refused for a database on
// a file before anything is opened (the copy is for in-memory databases only).
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { loadMigrations, migrate } from '../../src/platform/db/migrate.js'
import { freshSqlite } from './sqliteTemplate.js'

const T0 = '2026-06-01T12:00:00.000Z'

t.test('a fresh database is a copy of the migrated template, one of its own', async (t) => {
  const [a, b] = [await freshSqlite(), await freshSqlite()]
  t.after(() => Promise.all([a.close(), b.close()]))
  const all = await loadMigrations()
  const versions = await a.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
  t.same(
    versions.map((r) => Number(r.version)),
    all.map((m) => m.version),
    'every migration recorded',
  )
  t.same((await migrate(a)).applied, [], 'nothing left to apply')
  t.same(await a.all('PRAGMA foreign_keys'), [{ foreign_keys: 1 }], 'foreign keys on, as on any connection')

  await a.kysely.insertInto('workspaces').values({ id: 'ws_1', name: 'One', region: 'us', created_at: T0 }).execute()
  t.same(await a.all('SELECT id FROM workspaces'), [{ id: 'ws_1' }])
  t.same(await b.all('SELECT id FROM workspaces'), [], 'a row written in one copy is not in another')
  const c = await freshSqlite()
  t.after(() => c.close())
  t.same(await c.all('SELECT id FROM workspaces'), [], 'nor in a later copy: the template is not written')
})

t.test("a fresh database's reads without ORDER BY come back reversed: code that relies on an order it did not ask for fails here", async (t) => {
  const db = await freshSqlite()
  t.after(() => db.close())
  const ids = ['ws_1', 'ws_2', 'ws_3']
  for (const id of ids) await db.kysely.insertInto('workspaces').values({ id, name: id, region: 'us', created_at: T0 }).execute()
  t.same(
    (await db.kysely.selectFrom('workspaces').select('id').execute()).map((r) => r.id),
    [...ids].reverse(),
    'unordered: reversed',
  )
  t.same(
    (await db.kysely.selectFrom('workspaces').select('id').orderBy('id').execute()).map((r) => r.id),
    ids,
    'ORDER BY: as asked',
  )
  t.same(await db.all('PRAGMA reverse_unordered_selects'), [{ reverse_unordered_selects: 1 }])

  // The option on a file: the writer's connection and the read-only one; by default, neither.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-reverse-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const reversed = await SqliteDatabase.open(path.join(dir, 'reversed.sqlite'), 1000, { reverseUnordered: true })
  const plain = await SqliteDatabase.open(path.join(dir, 'plain.sqlite'), 1000)
  t.after(() => Promise.all([reversed.close(), plain.close()]))
  const pragma = async (k: typeof db.kysely) =>
    (await sql<{ reverse_unordered_selects: number }>`PRAGMA reverse_unordered_selects`.execute(k)).rows[0]?.reverse_unordered_selects
  t.not(reversed.reads, reversed.kysely, 'a file has a read connection of its own')
  t.equal(await pragma(reversed.kysely), 1, 'the writer')
  t.equal(await pragma(reversed.reads), 1, 'the reads')
  t.equal(await pragma(plain.kysely), 0, 'not set by default: the writer')
  t.equal(await pragma(plain.reads), 0, 'nor the reads')
})

t.test('copyOf is for an in-memory database: on a file it is refused before the file is made', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-copyof-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const source = path.join(dir, 'source.sqlite')
  const s = await SqliteDatabase.open(source, 1000)
  await s.close()
  await t.rejects(SqliteDatabase.open(path.join(dir, 'db.sqlite'), 1000, { copyOf: source }), /copyOf is for an in-memory database/)
  t.notOk(fs.existsSync(path.join(dir, 'db.sqlite')), 'no file made')
})
