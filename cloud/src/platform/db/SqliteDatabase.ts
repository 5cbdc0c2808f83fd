// SQLite, the embedded default: a file under SVC_DATA_DIR (or ':memory:' in tests) behind
// the sqlite3 dialect in ./SqliteDialect.ts: one connection for writes and everything in a
// transaction, and (on a file) a second, read-only one for `reads` (the screen list),
// which WAL lets read while the first one writes.
import { Kysely, sql } from 'kysely'
import { KyselyDatabase } from './Database.js'
import { Sqlite3Dialect, type SqliteOptions } from './SqliteDialect.js'
import type { DB } from './schema.js'

export class SqliteDatabase extends KyselyDatabase {
  declare readonly dialect: 'sqlite'
  /**
   * `opts.copyOf`: an in-memory database that starts as a copy of that database file;
   * `opts.reverseUnordered`: unordered reads come back reversed, on both connections (see SqliteOptions).
   */
  static async open(file: string, busyTimeoutMs: number, opts: Pick<SqliteOptions, 'copyOf' | 'reverseUnordered'> = {}): Promise<SqliteDatabase> {
    const main = new Kysely<DB>({ dialect: new Sqlite3Dialect(file, busyTimeoutMs, opts) })
    // Opens the file now, so a bad path fails at start rather than at the first request (and
    // the file exists, in WAL mode, before the read-only connection opens it).
    await sql`SELECT 1`.execute(main)
    if (file === ':memory:') return new SqliteDatabase('sqlite', main)
    const reads = new Kysely<DB>({ dialect: new Sqlite3Dialect(file, busyTimeoutMs, { readOnly: true, reverseUnordered: opts.reverseUnordered }) })
    try {
      await sql`SELECT 1`.execute(reads)
    } catch (e) {
      await main.destroy()
      throw e
    }
    return new SqliteDatabase('sqlite', main, reads)
  }
}
