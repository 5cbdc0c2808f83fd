// PostgreSQL: a parameterised read runs as a named prepared statement of its connection
// (parsed and planned once), writes and statements without parameters do not, and a read
// prepared before its table changed shape still answers (run again unnamed).
import t from 'tap'
import { sql } from 'kysely'
import { PostgresDatabase } from '../../src/platform/db/PostgresDatabase.js'
import { freshPostgresSchema, requirePostgres } from './engines.js'

t.test('parameterised reads are prepared once per connection; writes are not; a changed table is read again', async (t) => {
  const url = requirePostgres(t, 'prepared reads')
  if (!url) return
  const schema = await freshPostgresSchema(t, url)
  // One connection, so every statement below meets the statements prepared before it.
  const db = await PostgresDatabase.open(url, { busyTimeoutMs: 2000, schema, max: 1 })
  t.after(() => db.close())
  const k = db.kysely
  await sql`CREATE TABLE prep_t (id TEXT PRIMARY KEY, n INTEGER NOT NULL)`.execute(k)
  await sql`INSERT INTO prep_t (id, n) VALUES (${'a'}, ${1}), (${'b'}, ${2})`.execute(k)

  const read = (id: string) => sql<{ id: string; n: number }>`SELECT id, n FROM prep_t WHERE id = ${id}`.execute(k)
  t.same((await read('a')).rows, [{ id: 'a', n: 1 }])
  t.same((await read('b')).rows, [{ id: 'b', n: 2 }], 'the same statement with another value')
  t.same((await read('zz')).rows, [])

  const prepared = async () =>
    (await sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`.execute(k)).rows
  const named = await prepared()
  t.equal(named.filter((p) => p.statement.includes('FROM prep_t WHERE id =')).length, 1, `prepared once: ${JSON.stringify(named)}`)
  t.notOk(
    named.some((p) => /^\s*insert/i.test(p.statement)),
    'a write is not prepared',
  )

  await sql`UPDATE prep_t SET n = ${5} WHERE id = ${'a'}`.execute(k)
  t.same((await read('a')).rows, [{ id: 'a', n: 5 }], 'a prepared read sees a later write')

  const all = (min: number) => sql<Record<string, unknown>>`SELECT * FROM prep_t WHERE n >= ${min} ORDER BY id`.execute(k)
  t.same((await all(0)).rows, [
    { id: 'a', n: 5 },
    { id: 'b', n: 2 },
  ])
  await sql`ALTER TABLE prep_t ADD COLUMN extra TEXT NOT NULL DEFAULT 'x'`.execute(k)
  t.same((await all(3)).rows, [{ id: 'a', n: 5, extra: 'x' }], 'the table changed shape after the read was prepared: it still answers, with the new column')
  t.same((await all(0)).rows.length, 2, 'and again')
})
