// The two-engine test harness. Data-touching tests call `eachEngine(t, name, fn)`: `fn`
// runs once on SQLite (always, a fresh in-memory database) and once on PostgreSQL when
// SVC_TEST_DATABASE_URL is set. On PostgreSQL each run gets a fresh schema
// (`t_<pid>_<random>`) made through an admin connection, used through the pool's
// search_path and dropped with CASCADE afterwards, so tests never see each other's rows
// and can run in parallel on one database. The database is migrated before `fn` runs.
// When SVC_TEST_DATABASE_URL is unset the PostgreSQL run is skipped with one line naming
// the test, unless CI=true: then it fails, so CI cannot pass without PostgreSQL.
import crypto from 'node:crypto'
import type { Test } from 'tap'
import pg from 'pg'
import type { Database } from '../../src/db/Database.js'
import { SqliteDatabase } from '../../src/db/SqliteDatabase.js'
import { PostgresDatabase } from '../../src/db/PostgresDatabase.js'
import { migrate } from '../../src/db/migrate.js'
import { missingTool, postgres, toolsRequired } from '@svc/shared/testing'

export type EngineName = 'sqlite' | 'postgres'
export const ENGINES: EngineName[] = ['sqlite', 'postgres']

export function postgresUrl(): string | null {
  return process.env.SVC_TEST_DATABASE_URL || null
}

/**
 * For a test that needs PostgreSQL: the URL, or null after skipping (CI unset) or failing
 * (CI=true) the test with one line naming it.
 */
export function requirePostgres(t: Test, name: string): string | null {
  const url = postgresUrl()
  if (url) return url
  const missing = missingTool(postgres) ?? 'needs PostgreSQL'
  if (toolsRequired()) t.fail(`${name}: ${missing} (CI is set: a missing tool fails)`)
  else t.skip(`${name}: ${missing}`, () => {})
  return null
}

/** A fresh, empty PostgreSQL schema for this test; dropped in t.after. */
export async function freshPostgresSchema(t: Test, url: string): Promise<string> {
  const schema = `t_${process.pid}_${crypto.randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query(`CREATE SCHEMA ${schema}`)
  } finally {
    await admin.end()
  }
  t.after(async () => {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      await c.query(`DROP SCHEMA ${schema} CASCADE`)
    } finally {
      await c.end()
    }
  })
  return schema
}

export interface OpenOptions {
  /** Skip migrations (the upgrade and migration tests run them themselves). */
  migrate?: boolean
  busyTimeoutMs?: number
  /** SQLite file instead of ':memory:'. */
  file?: string
}

/** Opens a fresh database on `engine` (the caller has checked PostgreSQL is configured); closed in t.after. */
export async function openEngine(t: Test, engine: EngineName, opts: OpenOptions = {}): Promise<Database> {
  const busy = opts.busyTimeoutMs ?? 2000
  let db: Database
  if (engine === 'sqlite') db = await SqliteDatabase.open(opts.file ?? ':memory:', busy)
  else {
    const url = postgresUrl()!
    const schema = await freshPostgresSchema(t, url)
    db = await PostgresDatabase.open(url, { busyTimeoutMs: busy, schema, max: 4 })
  }
  // Registered after the schema's drop, so it runs before it (t.after is last-in, first-out).
  t.after(() => db.close().catch(() => undefined))
  if (opts.migrate !== false) await migrate(db)
  return db
}

/** Runs `fn` as a subtest per engine, each on its own fresh, migrated database. */
export function eachEngine(t: Test, name: string, fn: (t: Test, db: Database, engine: EngineName) => Promise<void>, opts: OpenOptions = {}): void {
  for (const engine of ENGINES) {
    t.test(`${name} [${engine}]`, async (st) => {
      if (engine === 'postgres' && !requirePostgres(st, `${name} [postgres]`)) return
      const db = await openEngine(st, engine, opts)
      await fn(st, db, engine)
    })
  }
}

/**
 * Route tests on both engines: `fn` declares its subtests once per engine, each getting a
 * `build` that makes the app (test/helpers.ts `build`) on a fresh database of that engine.
 */
export function forEngines(t: Test, fn: (t: Test, build: EngineBuild, engine: EngineName) => Promise<void> | void): void {
  // The file runs twice as long on two engines: ask the runner for twice its time limit.
  if (postgresUrl()) t.setTimeout(2 * 1000 * Number(process.env.TAP_TIMEOUT || 120))
  for (const engine of ENGINES) {
    t.test(engine, async (et) => {
      if (engine === 'postgres' && !requirePostgres(et, `${et.fullname}`)) return
      const build: EngineBuild = async (st, config = {}, deps = {}) => {
        const { build: buildApp } = await import('../helpers.js')
        const db = await openEngine(st, engine)
        return buildApp(st, config, { ...deps, db })
      }
      await fn(et, build, engine)
    })
  }
}

export type EngineBuild = (
  t: Test,
  config?: Partial<import('../../src/config.js').Config>,
  deps?: import('../../src/app.js').AppDeps,
) => Promise<import('../helpers.js').Harness>
