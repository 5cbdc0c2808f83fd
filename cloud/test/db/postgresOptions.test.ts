// PostgreSQL: server settings given in the URL's `options` parameter (as libpq takes them)
// hold for every session of the pool, beside the settings the cloud gives each session (the
// lock timeout, the schema) rather than in their place.
import t from 'tap'
import { sql } from 'kysely'
import { PostgresDatabase, splitOptions } from '../../src/platform/db/PostgresDatabase.js'
import { freshPostgresSchema, requirePostgres } from './engines.js'

t.test("the URL's options and the cloud's own session settings hold together", async (t) => {
  const url = requirePostgres(t, 'URL options')
  if (!url) return
  const schema = await freshPostgresSchema(t, url)
  const base = splitOptions(url).connectionString
  const withOptions = `${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent('-c synchronous_commit=off -c application_name=svc_options_test')}`
  const db = await PostgresDatabase.open(withOptions, { busyTimeoutMs: 1234, schema, max: 1 })
  t.after(() => db.close())
  const show = async (name: string) => (await sql<Record<string, string>>`SELECT current_setting(${name}) AS v`.execute(db.kysely)).rows[0]!.v
  t.equal(await show('synchronous_commit'), 'off', "the URL's setting")
  t.equal(await show('application_name'), 'svc_options_test', 'and its second one')
  t.equal(await show('search_path'), schema, "the cloud's schema")
  t.equal(await show('lock_timeout'), '1234ms', 'and its lock timeout')
})

t.test('splitOptions takes the options parameter out of the URL and leaves the rest', async (t) => {
  t.same(splitOptions('postgres://u:p@h:5432/db?options=-c%20a%3Db&sslmode=disable'), {
    connectionString: 'postgres://u:p@h:5432/db?sslmode=disable',
    options: '-c a=b',
  })
  t.same(splitOptions('postgres://u:p@h/db'), { connectionString: 'postgres://u:p@h/db', options: null })
})
