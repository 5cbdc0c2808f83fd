// Opening a fresh, migrated database of either engine for a test (the two-engine harness,
// engines.ts, builds on it; so does helpers.ts for SVC_TEST_ENGINE=postgres).
import { execFile } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import pg from 'pg'
import type { Database } from '../../src/platform/db/Database.js'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { freshSqlite } from './sqliteTemplate.js'
import { PostgresDatabase } from '../../src/platform/db/PostgresDatabase.js'
import { loadMigrations, migrate } from '../../src/platform/db/migrate.js'
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

/**
 * A fresh PostgreSQL schema for this test, empty or (`migrated`) holding what `migrate`
 * makes (the template below); dropped in t.after.
 */
export async function freshPostgresSchema(t: Test, url: string, opts: { migrated?: boolean } = {}): Promise<string> {
  const schema = `t_${process.pid}_${crypto.randomBytes(4).toString('hex')}`
  const template = opts.migrated ? await migratedTemplate(url) : null
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query(`CREATE SCHEMA ${schema}`)
    // One round trip, one transaction: the template's statements aimed at this schema.
    if (template) await admin.query(`BEGIN;\n${template.text.replaceAll(template.placeholder, schema)}\nCOMMIT;`)
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

// The migrated schema as a template: running the migrations costs a PostgreSQL test about
// 0.7 s of CPU (~0.5 s in the server, ~0.2 s here, one round trip per statement); the
// schema they leave, as pg_dump writes it (tables, indexes, constraints, the rows the
// migrations insert, sequences), replays as one statement text in about half that. It is
// made once per run: the first process that needs it migrates a schema of its own, dumps it
// and drops it; the dump, with the schema's name replaced by TEMPLATE_SCHEMA, is kept on
// disk (cloud/node_modules/.cache/svc-pg-template/) under a name made of the migrations'
// statements, the server's version and pg_dump's, written under a temporary name then
// renamed (two processes making it at once each write a whole file; either wins). A change
// to any migration makes another name, so another template. Without pg_dump the tests
// migrate each schema as before. The migrations themselves stay tested: the template is
// what `migrate` made, and cloud/test/db/migrate.test.ts runs them on empty schemas.
const TEMPLATE_SCHEMA = '__svc_template_schema__'
const TEMPLATE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '.cache', 'svc-pg-template')
let templateText: Promise<string | null> | null = null

function pgDump(args: string[]): Promise<string | null> {
  return new Promise((resolve, reject) =>
    execFile('pg_dump', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT') resolve(null)
      else if (err) reject(err)
      else resolve(stdout)
    }),
  )
}

/** The migrated schema's statements, its name written as `placeholder`; null without pg_dump. */
export async function migratedTemplate(url: string): Promise<{ text: string; placeholder: string } | null> {
  const text = await migratedTemplateText(url)
  return text === null ? null : { text, placeholder: TEMPLATE_SCHEMA }
}

function migratedTemplateText(url: string): Promise<string | null> {
  templateText ??= (async () => {
    const dumpVersion = await pgDump(['--version'])
    if (dumpVersion === null) return null
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    let serverVersion: string
    try {
      serverVersion = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version
    } finally {
      await admin.end()
    }
    const statements = (await loadMigrations()).map((m) => [m.version, m.name, typeof m.statements === 'function' ? m.statements('postgres') : m.statements])
    const key = crypto
      .createHash('sha256')
      .update(JSON.stringify([statements, serverVersion, dumpVersion.trim()]))
      .digest('hex')
      .slice(0, 20)
    const file = path.join(TEMPLATE_DIR, `${key}.sql`)
    try {
      return fs.readFileSync(file, 'utf8')
    } catch {
      // not made yet
    }
    const name = `svc_template_${process.pid}_${crypto.randomBytes(4).toString('hex')}`
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      await c.query(`CREATE SCHEMA ${name}`)
      const db = await PostgresDatabase.open(url, { busyTimeoutMs: 10_000, schema: name, max: 1 })
      try {
        await migrate(db)
      } finally {
        await db.close()
      }
      const dump = await pgDump(['--no-owner', '--no-privileges', '--inserts', '--schema', name, url])
      if (dump === null) return null
      const text = dump
        .split('\n')
        // psql's commands (\restrict …) and the schema's own creation (the test makes it).
        .filter((l) => !l.startsWith('\\') && l !== `CREATE SCHEMA ${name};`)
        .join('\n')
        .replaceAll(name, TEMPLATE_SCHEMA)
      fs.mkdirSync(TEMPLATE_DIR, { recursive: true })
      const tmp = `${file}.${process.pid}.tmp`
      fs.writeFileSync(tmp, text)
      fs.renameSync(tmp, file)
      return text
    } finally {
      await c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`).catch(() => undefined)
      await c.end()
    }
  })()
  return templateText
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
  // A migrated in-memory database starts as a copy of the migrated template (./sqliteTemplate.ts).
  if (engine === 'sqlite')
    db = opts.file === undefined && opts.migrate !== false ? await freshSqlite(busy) : await SqliteDatabase.open(opts.file ?? ':memory:', busy)
  else {
    const url = postgresUrl()!
    const schema = await freshPostgresSchema(t, url, { migrated: opts.migrate !== false })
    db = await PostgresDatabase.open(url, { busyTimeoutMs: busy, schema, max: 4 })
  }
  // Registered after the schema's drop, so it runs before it (t.after is last-in, first-out).
  t.after(() => db.close().catch(() => undefined))
  // On PostgreSQL the schema is a copy of the migrated template (nothing left to apply; it
  // still checks the versions), or empty when there is no pg_dump.
  if (opts.migrate !== false) await migrate(db)
  return db
}
