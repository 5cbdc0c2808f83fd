// The two-engine test harness. Data-touching tests call `eachEngine(t, name, fn)`: `fn`
// runs once on SQLite (always, a fresh in-memory database) and once on PostgreSQL when
// SVC_TEST_DATABASE_URL is set. On PostgreSQL each run gets a fresh schema
// (`t_<pid>_<random>`) made through an admin connection, used through the pool's
// search_path and dropped with CASCADE afterwards, so tests never see each other's rows
// and can run in parallel on one database. The database is migrated before `fn` runs.
// When SVC_TEST_DATABASE_URL is unset the PostgreSQL run is skipped with one line naming
// the test, unless CI=true: then it fails, so CI cannot pass without PostgreSQL.
import type { Test } from 'tap'
import type { Database } from '../../src/platform/db/Database.js'
import { ENGINES, openEngine, requirePostgres, postgresUrl, type EngineName, type OpenOptions } from './openEngine.js'

export * from './openEngine.js'

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
 * For the files whose subject is the data layer seen through a route: query shapes and
 * counts, batching, leases and claims, counting windows, ordering.
 */
export function forEngines(t: Test, fn: (t: Test, build: EngineBuild, engine: EngineName) => Promise<void> | void): void {
  // The file runs twice as long on two engines: ask the runner for twice its time limit.
  if (postgresUrl()) t.setTimeout(2 * 1000 * Number(process.env.TAP_TIMEOUT || 120))
  for (const engine of ENGINES) onEngine(t, engine, fn)
}

/**
 * Route tests whose subject is the interface rather than the SQL (validation, permissions,
 * pinned keys, tenancy, what an answer holds): `fn` runs once, on SQLite, or on the engine
 * SVC_TEST_ENGINE names. The SQL they reach is tested on both engines by the repositories'
 * tests (cloud/test/db/) and the files that use `forEngines`.
 */
export function onOneEngine(t: Test, fn: (t: Test, build: EngineBuild, engine: EngineName) => Promise<void> | void): void {
  onEngine(t, process.env.SVC_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite', fn)
}

function onEngine(t: Test, engine: EngineName, fn: (t: Test, build: EngineBuild, engine: EngineName) => Promise<void> | void): void {
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

export type EngineBuild = (
  t: Test,
  config?: Partial<import('../../src/config.js').Config>,
  deps?: import('../../src/app.js').AppDeps,
) => Promise<import('../helpers.js').Harness>
