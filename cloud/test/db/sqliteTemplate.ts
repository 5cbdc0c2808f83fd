// A fresh migrated in-memory SQLite database for a test, as a copy of a migrated template:
// the first database a test process asks for runs every migration in memory and writes the
// result to a file (VACUUM INTO, in the system's temporary folder, removed when the process
// exits); every database, that first one too, starts as
// a page-by-page copy of that file (SQLite's backup API: about a millisecond instead of every
// migration's statements). The migrations themselves stay tested: the template is what
// `migrate` made in this process, and cloud/test/db/migrate.test.ts runs them on empty databases.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { migrate } from '../../src/platform/db/migrate.js'

let template: Promise<string> | null = null

function makeTemplate(): Promise<string> {
  template ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sqlite-template-'))
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
    const file = path.join(dir, 'migrated.sqlite')
    const db = await SqliteDatabase.open(':memory:', 2000)
    try {
      await migrate(db)
      // A file in rollback-journal mode, no WAL beside it: what the copies read.
      await db.run(`VACUUM INTO '${file.replaceAll("'", "''")}'`)
    } finally {
      await db.close()
    }
    return file
  })()
  return template
}

/**
 * A new in-memory database holding every migration (the caller closes it). Its reads without
 * ORDER BY come back reversed, so a read that relies on an order it did not ask for fails here
 * rather than now and then on PostgreSQL.
 */
export async function freshSqlite(busyTimeoutMs = 2000): Promise<SqliteDatabase> {
  return SqliteDatabase.open(':memory:', busyTimeoutMs, { copyOf: await makeTemplate(), reverseUnordered: true })
}
