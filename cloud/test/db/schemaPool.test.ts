// The tests' PostgreSQL schemas (./openEngine.ts): a migrated schema a test used goes back to
// its process's pool when the test ends, emptied of what the test wrote and holding the
// migrations' own rows again; one whose shape the test changed (a table made, a column added,
// a table renamed, an index dropped) is dropped instead, never handed to another test. A
// table renamed and back is the same shape, and is kept.
import t from 'tap'
import type { Database } from '../../src/platform/db/Database.js'
import { loadMigrations, migrate } from '../../src/platform/db/migrate.js'
import { openEngine, requirePostgres } from './engines.js'

const T0 = '2026-06-01T12:00:00.000Z'

const schemaOf = async (db: Database) => (await db.get<{ s: string }>('SELECT current_schema() AS s'))!.s

/** Whether a schema of that name exists, seen from another session. */
async function exists(db: Database, schema: string): Promise<boolean> {
  return (await db.get<{ n: number }>('SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1', [schema]))!.n === 1
}

t.test('a schema comes back empty but for the migrations, and is handed out again', async (t) => {
  if (!requirePostgres(t, 'schema pool')) return
  let first = ''
  await t.test('a test writes rows', async (t) => {
    const db = await openEngine(t, 'postgres')
    first = await schemaOf(db)
    await db.kysely.insertInto('workspaces').values({ id: 'ws_pool', name: 'Pool', region: 'us', created_at: T0 }).execute()
    await db.run('DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)')
  })
  await t.test('the next test gets that schema, as the migrations left it', async (t) => {
    const db = await openEngine(t, 'postgres')
    t.equal(await schemaOf(db), first, 'the same schema, reused')
    t.same(await db.all('SELECT id FROM workspaces'), [], 'no row of the test before')
    const versions = await db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
    t.same(
      versions.map((r) => Number(r.version)),
      (await loadMigrations()).map((m) => m.version),
      "the migrations' own rows, every one",
    )
    t.same((await migrate(db)).applied, [], 'nothing left to apply')
  })
})

for (const [what, change] of [
  ['a table made', 'CREATE TABLE pool_probe (id TEXT PRIMARY KEY)'],
  ['a column added', "ALTER TABLE workspaces ADD COLUMN pool_probe TEXT NOT NULL DEFAULT 'x'"],
  ['a table renamed', 'ALTER TABLE events_outbox RENAME TO events_outbox_away'],
  ['an index dropped', 'DROP INDEX __index__'],
] as const) {
  t.test(`a schema whose shape changed (${what}) is dropped, not handed out again`, async (t) => {
    if (!requirePostgres(t, `schema pool: ${what}`)) return
    let changed = ''
    await t.test('a test changes its schema', async (t) => {
      const db = await openEngine(t, 'postgres')
      changed = await schemaOf(db)
      let sql = change as string
      if (sql.includes('__index__')) {
        const index = await db.get<{ name: string }>(
          "SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%pkey' ORDER BY indexname LIMIT 1",
        )
        t.ok(index, 'an index to drop')
        sql = sql.replace('__index__', index!.name)
      }
      await db.run(sql)
    })
    await t.test('the next test gets another schema, and the changed one is gone', async (t) => {
      const db = await openEngine(t, 'postgres')
      t.not(await schemaOf(db), changed, 'another schema')
      t.notOk(await exists(db, changed), `${changed} was dropped`)
    })
  })
}
