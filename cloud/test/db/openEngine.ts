// Opening a fresh, migrated database of either engine for a test (the two-engine harness,
// engines.ts, builds on it; so does helpers.ts for SVC_TEST_ENGINE=postgres).
import crypto from 'node:crypto'
import type { Test } from 'tap'
import pg from 'pg'
import type { Database } from '../../src/platform/db/Database.js'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { PostgresDatabase } from '../../src/platform/db/PostgresDatabase.js'
import { migrate } from '../../src/platform/db/migrate.js'
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
