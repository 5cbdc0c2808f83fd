// Which database a bench runs the product on: SQLite (default) or PostgreSQL, named by
// `--database-url=postgres://…` or BENCH_DATABASE_URL. On PostgreSQL each run gets a
// fresh schema, dropped when the bench ends, so runs never see each other's rows.
import crypto from 'node:crypto'
import { PostgresDatabase } from '../../cloud/src/platform/db/PostgresDatabase.js'

/** The PostgreSQL URL the bench was given, or null for SQLite; the argument is removed from process.argv. */
export function databaseUrlArg(): string | null {
  const i = process.argv.findIndex((a) => a.startsWith('--database-url'))
  let url: string | null = process.env.BENCH_DATABASE_URL || null
  if (i >= 0) {
    const arg = process.argv[i]!
    const eq = arg.indexOf('=')
    url = eq >= 0 ? arg.slice(eq + 1) : (process.argv[i + 1] ?? null)
    process.argv.splice(i, eq >= 0 ? 1 : 2)
  }
  if (url && !/^postgres(ql)?:\/\//.test(url)) throw new Error(`--database-url must be a postgres:// URL, got ${url}`)
  return url
}

/** Runs one statement on its own short-lived connection to `url`. */
async function adminStatement(url: string, sql: string): Promise<void> {
  const db = await PostgresDatabase.open(url, { busyTimeoutMs: 5000, max: 1 })
  try {
    await db.run(sql)
  } finally {
    await db.close()
  }
}

export interface FreshSchema {
  schema: string
  drop(): Promise<void>
}

/** A new empty schema on `url`, for a product built in the bench's process (PostgresDatabase.open's `schema`). */
export async function freshSchema(url: string): Promise<FreshSchema> {
  const schema = `bench_${process.pid}_${crypto.randomBytes(3).toString('hex')}`
  await adminStatement(url, `CREATE SCHEMA ${schema}`)
  return { schema, drop: () => adminStatement(url, `DROP SCHEMA ${schema} CASCADE`) }
}

export interface FreshDatabase {
  /** The URL of the new database. */
  url: string
  drop(): Promise<void>
}

/**
 * A new empty database next to the one `url` names (the role needs CREATEDB), for a product
 * started as its own process (its SVC_DATABASE_URL names a database, not a schema).
 */
export async function freshDatabase(url: string): Promise<FreshDatabase> {
  const name = `svc_bench_${process.pid}_${crypto.randomBytes(3).toString('hex')}`
  await adminStatement(url, `CREATE DATABASE ${name}`)
  const u = new URL(url)
  u.pathname = `/${name}`
  return { url: u.toString(), drop: () => adminStatement(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

/** "sqlite" or "postgres <host>/<db>" for the bench's output. */
export function engineLabel(url: string | null): string {
  if (!url) return 'sqlite (file, WAL)'
  const u = new URL(url)
  return `postgres ${u.host}${u.pathname}`
}
