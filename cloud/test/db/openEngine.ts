// Opening a fresh, migrated database of either engine for a test (the two-engine harness,
// engines.ts, builds on it; so does helpers.ts for SVC_TEST_ENGINE=postgres).
import { execFile } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import tap, { type Test } from 'tap'
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
 * makes (the template below); dropped in t.after. With `reuse` (openEngine's databases, which
 * it closes itself) a migrated schema is emptied instead and kept for the process's next test
 * (see SchemaPool).
 */
export async function freshPostgresSchema(t: Test, url: string, opts: { migrated?: boolean; reuse?: boolean } = {}): Promise<string> {
  const template = opts.migrated ? await migratedTemplate(url) : null
  const pool = template && opts.reuse ? schemaPool(url, template) : null
  if (pool) {
    const schema = await pool.take()
    t.after(() => pool.give(schema))
    return schema
  }
  const schema = await createSchema(url, template)
  t.after(() => dropSchema(url, schema))
  return schema
}

async function createSchema(url: string, template: { text: string; placeholder: string } | null): Promise<string> {
  const schema = `t_${process.pid}_${crypto.randomBytes(4).toString('hex')}`
  await withAdmin(url, async (admin) => {
    await admin.query(`CREATE SCHEMA ${schema}`)
    // One round trip, one transaction: the template's statements aimed at this schema.
    if (template) await admin.query(`BEGIN;\n${template.text.replaceAll(template.placeholder, schema)}\nCOMMIT;`)
  })
  return schema
}

function dropSchema(url: string, schema: string): Promise<void> {
  return withAdmin(url, async (c) => {
    await c.query(`DROP SCHEMA ${schema} CASCADE`)
  })
}

/** Runs `fn` on a connection of its own to `url`, closed after it. */
export async function withAdmin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return await fn(c)
  } finally {
    await c.end()
  }
}

// Migrated schemas kept for reuse, per process. Making one from the template and dropping it
// costs the machine about 0.8 s of CPU (68 tables and 90 indexes: their catalog rows and files,
// made then unlinked); emptying one (a DELETE per table, children first, and the template's
// own rows written again) about 0.05 s. A test's schema goes back to its process's pool when
// the test ends, after its database has closed (t.after runs last-in, first-out), and only if
// its shape is still the template's: a test that made, renamed or altered anything (tables,
// columns, defaults, indexes, constraints, functions, types, triggers) has its schema dropped
// as before. Each test still starts on a schema holding exactly what the migrations made. The
// pool's schemas are dropped when the process's tests end.
interface SchemaPool {
  take(): Promise<string>
  give(schema: string): Promise<void>
}

const pools = new Map<string, SchemaPool>()

/** A fingerprint of everything a schema defines (not its rows). */
const SHAPE = `
  SELECT md5(coalesce(string_agg(x, E'\\n' ORDER BY x), '')) AS shape FROM (
    SELECT c.relname || ':' || c.relkind::text || ':' || coalesce(pg_get_indexdef(c.oid), '') || ':' || coalesce((
      SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ',' ORDER BY a.attnum)
      FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') AS x
    FROM pg_class c WHERE c.relnamespace = $1::regnamespace
    UNION ALL SELECT 'constraint ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = $1::regnamespace
    UNION ALL SELECT 'function ' || oid::regprocedure::text FROM pg_proc WHERE pronamespace = $1::regnamespace
    UNION ALL SELECT 'type ' || typname FROM pg_type WHERE typnamespace = $1::regnamespace
    UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger WHERE NOT tgisinternal AND tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = $1::regnamespace)
  ) s`

/** The process's pool for `url`; null when the template's rows cannot be read line by line. */
function schemaPool(url: string, template: { text: string; placeholder: string }): SchemaPool | null {
  const existing = pools.get(url)
  if (existing) return existing
  const free: string[] = []
  // The shape each schema had when made, to compare with when it comes back.
  const shapes = new Map<string, string>()
  // The rows the template holds (the migrations' own), as statements aimed at any schema.
  const rows = template.text.split('\n').filter((l) => l.startsWith(`INSERT INTO ${template.placeholder}.`))
  // pg_dump writes one INSERT per line unless a value holds a line break: then no pool.
  if (template.text.split('INSERT INTO ').length - 1 !== rows.length) return null
  // The tables, children before the tables their foreign keys name: read once, from the first
  // schema made (false when foreign keys form a cycle: no order empties them, so schemas are dropped).
  let tables: string[] | false | null = null
  const readTables = async (c: pg.Client, schema: string): Promise<string[] | false> => {
    const names = (await c.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = $1`, [schema])).rows.map((r) => r.name)
    const refs = (
      await c.query<{ child: string; parent: string }>(
        `SELECT cc.relname AS child, pc.relname AS parent FROM pg_constraint k
         JOIN pg_class cc ON cc.oid = k.conrelid JOIN pg_class pc ON pc.oid = k.confrelid
         WHERE k.contype = 'f' AND k.connamespace = $1::regnamespace AND k.conrelid <> k.confrelid`,
        [schema],
      )
    ).rows
    const ordered: string[] = []
    const state = new Map<string, 'visiting' | 'done'>()
    // Depth first over "is named by": every child of a table comes out before it.
    const visit = (name: string): boolean => {
      if (state.get(name) === 'done') return true
      if (state.get(name) === 'visiting') return false
      state.set(name, 'visiting')
      for (const r of refs) if (r.parent === name && !visit(r.child)) return false
      state.set(name, 'done')
      ordered.push(name)
      return true
    }
    for (const n of [...names].sort()) if (!visit(n)) return false
    return ordered
  }
  const pool: SchemaPool = {
    async take() {
      const reused = free.pop()
      if (reused) return reused
      const schema = await createSchema(url, template)
      try {
        await withAdmin(url, async (c) => {
          shapes.set(schema, (await c.query<{ shape: string }>(SHAPE, [schema])).rows[0]!.shape)
          tables ??= await readTables(c, schema)
        })
      } catch (e) {
        await dropSchema(url, schema).catch(() => undefined)
        throw e
      }
      return schema
    },
    async give(schema) {
      let kept = false
      try {
        await withAdmin(url, async (c) => {
          if (!tables) return
          if ((await c.query<{ shape: string }>(SHAPE, [schema])).rows[0]!.shape !== shapes.get(schema)) return
          // A lock still held on the schema's rows (a connection left open) drops the schema instead.
          const empty = tables.map((n) => `DELETE FROM ${schema}.${n};`).join('\n')
          const refill = rows.map((l) => l.replace(`INSERT INTO ${template.placeholder}.`, `INSERT INTO ${schema}.`)).join('\n')
          await c.query(`BEGIN;\nSET LOCAL lock_timeout = '10s';\n${empty}\n${refill}\nCOMMIT;`)
          kept = true
        })
      } catch {
        kept = false
      }
      if (kept) free.push(schema)
      else {
        shapes.delete(schema)
        await dropSchema(url, schema)
      }
    },
  }
  pools.set(url, pool)
  // When the process's tests end, its kept schemas go.
  tap.teardown(async () => {
    pools.delete(url)
    for (const schema of free.splice(0)) await dropSchema(url, schema).catch(() => undefined)
  })
  return pool
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
    const serverVersion = await withAdmin(url, async (c) => (await c.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version)
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
    return withAdmin(url, async (c) => {
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
      }
    })
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
    const schema = await freshPostgresSchema(t, url, { migrated: opts.migrate !== false, reuse: true })
    db = await PostgresDatabase.open(url, { busyTimeoutMs: busy, schema, max: 4 })
  }
  // Registered after the schema's drop, so it runs before it (t.after is last-in, first-out).
  t.after(() => db.close().catch(() => undefined))
  // On PostgreSQL the schema is a copy of the migrated template (nothing left to apply; it
  // still checks the versions), or empty when there is no pg_dump.
  if (opts.migrate !== false) await migrate(db)
  return db
}
