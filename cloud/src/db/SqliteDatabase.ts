// SQLite, the embedded default: a file under SVC_DATA_DIR (or ':memory:' in tests) behind
// the sqlite3 dialect in ./SqliteDialect.ts.
import { Kysely, sql } from 'kysely'
import { KyselyDatabase } from './Database.js'
import { Sqlite3Dialect } from './SqliteDialect.js'
import type { DB } from './schema.js'

export class SqliteDatabase extends KyselyDatabase {
  declare readonly dialect: 'sqlite'
  static async open(file: string, busyTimeoutMs: number): Promise<SqliteDatabase> {
    const db = new SqliteDatabase('sqlite', new Kysely<DB>({ dialect: new Sqlite3Dialect(file, busyTimeoutMs) }))
    // Opens the file now, so a bad path fails at start rather than at the first request.
    await sql`SELECT 1`.execute(db.kysely)
    return db
  }
}
