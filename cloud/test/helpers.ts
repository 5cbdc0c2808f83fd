// Test helper: build(t) makes an app on an in-memory database (a copy of the migrated
// template) and a manual clock, and closes it in t.after. Workspaces and their owner keys are made the way bootstrap makes them.
import type { Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp, type AppDeps, servicesOf } from '../src/app.js'
import { testConfig, type Config } from '../src/config.js'
import { ManualClock } from '../src/platform/clock.js'
import { freshSqlite } from './db/sqliteTemplate.js'
import type { Database } from '../src/platform/db/Database.js'

export interface Harness {
  app: FastifyInstance
  clock: ManualClock
  /** Creates a workspace with an owner key holding `all`, as `pnpm cloud bootstrap` does. */
  workspace(name?: string, region?: string): Promise<{ workspaceId: string; apiKey: string }>
  /** Sends a request with the given bearer token; `body` is sent as JSON. */
  req(method: string, url: string, token: string | null, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>
}

export async function build(t: Test, config: Partial<Config> = {}, deps: AppDeps = {}): Promise<Harness> {
  const clock = (deps.clock as ManualClock | undefined) ?? new ManualClock('2026-06-01T12:00:00.000Z')
  // SVC_TEST_ENGINE=postgres (with SVC_TEST_DATABASE_URL) runs any inject test on a fresh
  // PostgreSQL schema: for trying a file not yet converted to forEngines.
  if (!deps.db && process.env.SVC_TEST_ENGINE === 'postgres') {
    const { openEngine } = await import('./db/openEngine.js')
    deps = { ...deps, db: await openEngine(t, 'postgres') }
  }
  const cfg = testConfig(config)
  // The in-memory database starts as a copy of the migrated template (one migration run per
  // process, cloud/test/db/sqliteTemplate.ts); closed after the app (t.after runs last-in, first-out).
  if (!deps.db && !cfg.databaseUrl && cfg.dbFile === ':memory:') {
    const db = await freshSqlite(cfg.dbBusyTimeoutMs)
    t.after(() => db.close())
    deps = { ...deps, db }
  }
  const app = await buildApp(cfg, { ...deps, clock })
  t.after(() => app.close())
  await app.ready()
  return {
    app,
    clock,
    async workspace(name = 'Test workspace', region = 'us') {
      const ws = await servicesOf(app).workspaces.create(name, region)
      const { secret } = await servicesOf(app).apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
      return { workspaceId: ws.id, apiKey: secret }
    },
    req(method, url, token, body, headers = {}) {
      return app.inject({
        method: method as 'GET',
        url,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
        ...(body !== undefined ? { payload: body as object } : {}),
      })
    },
  }
}

/** Creates a key through the API with the given permissions (and optional pin). */
export async function makeKey(
  h: Harness,
  creator: string,
  permissions: string[] | 'all',
  nodeId: string | null = null,
): Promise<{ id: string; secret: string }> {
  const res = await h.req('POST', '/v1/api-keys', creator, { name: 'k', permissions, nodeId })
  if (res.statusCode !== 201) throw new Error(`makeKey: ${res.statusCode} ${res.body}`)
  const d = res.json().data
  return { id: d.id, secret: d.secret }
}

/** A fresh on-disk SQLite database (for tests that need a second connection or to break storage). */
export async function tempDatabase(t: Test, busyTimeoutMs = 50): Promise<{ db: import('../src/platform/db/SqliteDatabase.js').SqliteDatabase; file: string }> {
  const os = await import('node:os')
  const path = await import('node:path')
  const fs = await import('node:fs')
  const { SqliteDatabase } = await import('../src/platform/db/SqliteDatabase.js')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-db-'))
  const file = path.join(dir, 'db.sqlite')
  const db = await SqliteDatabase.open(file, busyTimeoutMs)
  t.after(async () => {
    await db.close().catch(() => undefined)
    fs.rmSync(dir, { recursive: true, force: true })
  })
  return { db, file }
}

/**
 * Counts the reads (SELECT statements) the app (or the database given) makes from now on,
 * outside transactions: raw statements and repositories' Kysely queries alike.
 */
export function countReads(of: Harness | Database): { n: number } {
  const db = 'app' in of ? servicesOf(of.app).db : of
  const executor = db.kysely.getExecutor()
  const counter = { n: 0 }
  const run = executor.executeQuery.bind(executor)
  executor.executeQuery = ((q: { sql: string }, ...rest: unknown[]) => {
    if (/^\s*(select|with)\b/i.test(q.sql)) counter.n++
    return (run as (...a: unknown[]) => unknown)(q, ...rest)
  }) as typeof executor.executeQuery
  return counter
}

/** The app database's tables, on either engine (SQLite's own tables left out), by name. */
export async function tableNames(h: Harness): Promise<string[]> {
  const db = servicesOf(h.app).db
  const rows =
    db.dialect === 'postgres'
      ? await db.all<{ name: string }>(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
        )
      : await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
  return rows.map((r) => r.name).sort()
}
