// SQLite: SELECTs and writes are kept prepared per connection and run again with new parameters; a
// statement that cannot be prepared fails its query (and is not kept), a read prepared
// before its table changed shape answers with the new shape, more distinct reads than the
// connection keeps still answer, and the database closes with statements kept. INSERTs
// whose rows come as one JSON parameter (the audit log's batches) are kept prepared too.
import t from 'tap'
import { sql } from 'kysely'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { tempDatabase } from '../helpers.js'

t.test('reads are prepared once and reused; failures, shape changes, eviction and close', async (t) => {
  const { db } = await tempDatabase(t, 2000)
  const k = db.kysely
  await sql`CREATE TABLE prep_t (id TEXT PRIMARY KEY, n INTEGER NOT NULL)`.execute(k)
  await sql`INSERT INTO prep_t (id, n) VALUES (${'a'}, ${1}), (${'b'}, ${2})`.execute(k)
  const read = (id: string) => sql<Record<string, unknown>>`SELECT * FROM prep_t WHERE id = ${id}`.execute(k)
  t.same((await read('a')).rows, [{ id: 'a', n: 1 }])
  t.same((await read('b')).rows, [{ id: 'b', n: 2 }], 'the same statement with another value')
  t.same((await read('zz')).rows, [])
  t.same(
    (await Promise.all(['a', 'b', 'a'].map(read))).map((r) => r.rows[0]?.id),
    ['a', 'b', 'a'],
    'queued runs of one statement each answer their own parameters',
  )

  const bad = await sql`SELECT * FROM no_such_table WHERE id = ${'x'}`.execute(k).catch((e: Error) => e)
  t.match(String(bad), /no such table/, 'a statement that cannot be prepared fails its query (it does not hang)')
  await sql`CREATE TABLE no_such_table (id TEXT)`.execute(k)
  t.same((await sql`SELECT * FROM no_such_table WHERE id = ${'x'}`.execute(k)).rows, [], 'and is prepared afresh once it can be')

  await sql`ALTER TABLE prep_t ADD COLUMN extra TEXT`.execute(k)
  await sql`UPDATE prep_t SET extra = ${'e'} WHERE id = ${'a'}`.execute(k)
  t.same((await read('a')).rows, [{ id: 'a', n: 1, extra: 'e' }], 'a read prepared before the table changed shape answers with the new shape')

  // More distinct reads than a connection keeps: the oldest are finalised, every one answers.
  for (let i = 0; i < 300; i++) {
    const r = await sql<{ v: number }>`SELECT ${sql.raw(String(i))} AS v, n FROM prep_t WHERE id = ${'b'}`.execute(k)
    if (r.rows[0]?.v !== i) t.fail(`read ${i} answered ${JSON.stringify(r.rows)}`)
  }
  t.same((await read('b')).rows, [{ id: 'b', n: 2, extra: null }], 'an evicted statement is prepared again')

  // Inside a transaction the same statements see its own writes.
  await k.transaction().execute(async (tx) => {
    await sql`UPDATE prep_t SET n = ${5} WHERE id = ${'b'}`.execute(tx)
    t.equal((await sql<{ n: number }>`SELECT * FROM prep_t WHERE id = ${'b'}`.execute(tx)).rows[0]?.n, 5)
  })
})

t.test('writes are kept prepared too: counts, RETURNING, a refused row, rollback and commit', async (t) => {
  const { db } = await tempDatabase(t, 2000)
  const k = db.kysely
  await sql`CREATE TABLE prep_w (id TEXT PRIMARY KEY, n INTEGER NOT NULL)`.execute(k)
  const insert = (id: string, n: number | null) => sql`INSERT INTO prep_w (id, n) VALUES (${id}, ${n})`.execute(k)
  for (let i = 0; i < 5; i++) t.equal((await insert(`r${i}`, i)).numAffectedRows, 1n, `insert ${i} counted`)
  const bump = (min: number) => sql`UPDATE prep_w SET n = n + 10 WHERE n >= ${min}`.execute(k)
  t.equal((await bump(3)).numAffectedRows, 2n, 'an update counts the rows it changed')
  t.equal((await bump(100)).numAffectedRows, 0n, 'the same statement again, changing none')
  const refused = await insert('r0', 1).catch((e: Error) => e)
  t.match(String(refused), /UNIQUE/, 'a refused row fails its query')
  const nullN = await insert('rx', null).catch((e: Error) => e)
  t.match(String(nullN), /NOT NULL/, 'and another refusal of the same statement')
  t.equal((await insert('r5', 5)).numAffectedRows, 1n, 'the statement still runs after failing')
  const returned = await sql<{ id: string; n: number }>`UPDATE prep_w SET n = n + 1 WHERE id = ${'r1'} RETURNING id, n`.execute(k)
  t.same(returned.rows, [{ id: 'r1', n: 2 }], 'RETURNING answers its rows')
  const deleted = await sql<{ id: string }>`DELETE FROM prep_w WHERE id = ${'r2'} RETURNING id`.execute(k)
  t.same(deleted.rows, [{ id: 'r2' }])
  await k
    .transaction()
    .execute(async (tx) => {
      await sql`INSERT INTO prep_w (id, n) VALUES (${'t1'}, ${1})`.execute(tx)
      throw new Error('roll back')
    })
    .catch(() => undefined)
  await k.transaction().execute(async (tx) => {
    await sql`INSERT INTO prep_w (id, n) VALUES (${'t2'}, ${2})`.execute(tx)
  })
  const ids = (await sql<{ id: string }>`SELECT id FROM prep_w ORDER BY id`.execute(k)).rows.map((r) => r.id)
  t.same(ids, ['r0', 'r1', 'r3', 'r4', 'r5', 't2'], 'the rolled-back insert is gone, the committed one stays')
})

t.test(
  'an INSERT of rows given as one JSON parameter is kept prepared too: each run writes its own rows and counts them, a refused run leaves nothing',
  async (t) => {
    const { db } = await tempDatabase(t, 2000)
    await db.run('CREATE TABLE prep_j (id TEXT PRIMARY KEY, n INTEGER NOT NULL)')
    const insert = (rows: [string, number][]) =>
      db.run('INSERT INTO prep_j (id, n) SELECT value ->> 0, value ->> 1 FROM json_each(?) ORDER BY key', [JSON.stringify(rows)])
    t.same(
      await insert([
        ['a', 1],
        ['b', 2],
      ]),
      { changes: 2 },
    )
    t.same(await insert([['c', 3]]), { changes: 1 }, 'the same statement with other rows')
    await t.rejects(
      insert([
        ['d', 4],
        ['a', 9],
      ]),
      /UNIQUE/,
      'a row refused refuses the statement',
    )
    t.same(await insert([['d', 4]]), { changes: 1 }, 'and the kept statement runs again after it')
    t.same(await db.all('SELECT id, n FROM prep_j ORDER BY id'), [
      { id: 'a', n: 1 },
      { id: 'b', n: 2 },
      { id: 'c', n: 3 },
      { id: 'd', n: 4 },
    ])
  },
)

t.test('an in-memory database closes with statements kept', async (t) => {
  const db = await SqliteDatabase.open(':memory:', 2000)
  await sql`SELECT ${1} AS one`.execute(db.kysely)
  await db.close()
  t.pass('closed')
})
