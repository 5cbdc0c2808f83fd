// Versioned schema migrations: one file per version under ./migrations, named
// `NNNN-what.ts` with NNNN its version and listed in ./migrations/index.ts. They are
// applied in version order, once each, and recorded in schema_migrations, all inside one
// transaction that holds a lock first (PostgreSQL: a transaction-scoped advisory lock;
// SQLite: BEGIN IMMEDIATE), so two processes starting at once on one database never both
// apply a version. A database that
// records a version this code does not know is newer than the code: refused.
// DDL is portable (docs/decisions.md "Data layer: portable DDL"): TEXT, INTEGER, BIGINT, REAL only;
// never edit a released migration, add the next one.
import { CompiledQuery, sql } from 'kysely'
import type { Database, Executor } from './Database.js'
import { migrations } from './migrations/index.js'
import type { Migration } from './migrations/Migration.js'

export type { Migration }

/** The database records versions this code does not have: a newer release made it. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly unknownVersions: number[],
    readonly latestKnown: number,
  ) {
    super(
      `the database has schema version(s) ${unknownVersions.join(', ')} which this release does not know (it knows up to ${latestKnown}); ` +
        'run the release that made it, or restore a backup taken before the upgrade',
    )
    this.name = 'SchemaTooNewError'
  }
}

// Any constant shared by every process of the cloud ("svmg" in ASCII), paired with the
// schema's name: advisory locks are database-wide, and schemas migrate independently (the
// tests give each run its own schema of one database).
const PG_LOCK_KEY = 0x73766d67

let cached: Migration[] | null = null

/** The migrations shipped with this code (migrations/index.ts), in version order. */
export async function loadMigrations(): Promise<Migration[]> {
  if (cached) return cached
  const list: Migration[] = []
  for (const m of migrations) {
    if (list.some((x) => x.version === m.version)) throw new Error(`two migrations have version ${m.version}`)
    if (list.length && list.at(-1)!.version > m.version) throw new Error(`migration ${m.version} is listed after ${list.at(-1)!.version}`)
    list.push(m)
  }
  cached = list
  return list
}

export interface MigrateResult {
  /** Versions applied by this call. */
  applied: number[]
  /** The database's version afterwards. */
  version: number
}

async function appliedVersions(k: Executor): Promise<number[]> {
  const rows = await k.selectFrom('schema_migrations').select('version').orderBy('version').execute()
  return rows.map((r) => Number(r.version))
}

/** Brings the schema up to this code's version; throws SchemaTooNewError on a newer database. */
export async function migrate(db: Database, list?: Migration[]): Promise<MigrateResult> {
  const all = [...(list ?? (await loadMigrations()))].sort((a, b) => a.version - b.version)
  const latest = all.at(-1)?.version ?? 0
  return db.kysely.transaction().execute(async (tx) => {
    if (db.dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(${PG_LOCK_KEY}, hashtext(current_schema()))`.execute(tx)
    await sql`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`.execute(tx)
    const done = new Set(await appliedVersions(tx))
    const unknown = [...done].filter((v) => !all.some((m) => m.version === v))
    if (unknown.length) throw new SchemaTooNewError(unknown, latest)
    const applied: number[] = []
    for (const m of all) {
      if (done.has(m.version)) continue
      const statements = typeof m.statements === 'function' ? m.statements(db.dialect) : m.statements
      for (const s of statements) await tx.executeQuery(CompiledQuery.raw(s))
      await tx.insertInto('schema_migrations').values({ version: m.version, name: m.name, applied_at: new Date().toISOString() }).execute()
      applied.push(m.version)
    }
    return { applied, version: Math.max(0, ...done, ...applied) }
  })
}
