// The data layer itself on both engines: numbers come back as numbers, transactions commit
// and roll back, migrations apply in order once under a lock (also with two openers at
// once), a database newer than the code is refused (by migrate, by buildApp and by
// `pnpm cloud migrate`), and a SQLite database made by the code before numbered
// migrations upgrades in place with its rows intact.
import t from 'tap'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import { eachEngine, openEngine, postgresUrl, requirePostgres, freshPostgresSchema } from './engines.js'
import { loadMigrations, migrate, SchemaTooNewError } from '../../src/platform/db/migrate.js'
import { SqliteDatabase } from '../../src/platform/db/SqliteDatabase.js'
import { PostgresDatabase } from '../../src/platform/db/PostgresDatabase.js'
import { buildApp } from '../../src/app.js'
import { testConfig } from '../../src/config.js'
import { createLegacyDatabase } from '../fixtures/legacy-migrations.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-mig-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('migration files are numbered in order and name their version', async (t) => {
  const list = await loadMigrations()
  const versions = list.map((m) => m.version)
  t.same(
    versions,
    [...versions].sort((a, b) => a - b),
    'loaded in version order',
  )
  t.same(versions.slice(0, 12), [1, 2, 3, 4, 10, 20, 21, 30, 31, 32, 40, 50], 'versions made before numbered files keep their numbers')
  t.ok(versions.includes(60), 'the events outbox')
  // The list is static (migrations/index.ts); every file of the folder is in it, in order,
  // and declares the version its name says.
  const dir = path.join(ROOT, 'cloud', 'src', 'platform', 'db', 'migrations')
  const files = fs
    .readdirSync(dir)
    .filter((f) => /^\d{4}-[a-z0-9-]+\.ts$/.test(f))
    .sort()
  const fromFiles: typeof list = []
  for (const f of files) {
    const m = ((await import(path.join(dir, f))) as { default: (typeof list)[number] }).default
    t.equal(m.version, Number(f.slice(0, 4)), `${f} declares the version its name says`)
    fromFiles.push(m)
  }
  t.equal(list.length, files.length, 'every migration file is listed in migrations/index.ts')
  t.ok(
    list.every((m, i) => m === fromFiles[i]),
    'in the order of their file names',
  )
})

eachEngine(t, 'numbers come back as numbers; counts, sums and BIGINT too', async (t, db) => {
  const k = db.kysely
  await k.insertInto('workspaces').values({ id: 'ws1', name: 'W', region: 'us', created_at: '2026-01-01T00:00:00.000Z', rate_limit: 7 }).execute()
  const row = await k.selectFrom('workspaces').select(['rate_limit']).where('id', '=', 'ws1').executeTakeFirstOrThrow()
  t.equal(row.rate_limit, 7)
  const c = await k
    .selectFrom('workspaces')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  t.equal(c.n, 1, 'COUNT(*) is a number')
  t.equal(typeof c.n, 'number')
  const raw = await db.get<{ n: number; s: number }>('SELECT COUNT(*) AS n, SUM(rate_limit) AS s FROM workspaces WHERE id = ?', ['ws1'])
  t.same(raw, { n: 1, s: 7 }, 'raw SQL too, with ? placeholders on both engines')
  const big = 10 * 1024 * 1024 * 1024
  await k
    .insertInto('media')
    .values({
      id: 'm1',
      workspace_id: 'ws1',
      name: 'big',
      kind: 'video',
      mime_type: 'video/mp4',
      size_bytes: big,
      sha256: 'x',
      state: 'ready',
      created_by: 'k',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    })
    .execute()
  const m = await k.selectFrom('media').select('size_bytes').executeTakeFirstOrThrow()
  t.equal(m.size_bytes, big, 'a 10 GiB size fits and is a number')
  const r = await db.run('UPDATE workspaces SET name = ? WHERE id = ?', ['X', 'ws1'])
  t.equal(r.changes, 1, 'run reports changed rows')
})

eachEngine(t, 'a transaction commits together or not at all', async (t, db) => {
  const ws = (id: string) => ({ id, name: id, region: 'us', created_at: '2026-01-01T00:00:00.000Z' })
  await t.rejects(
    db.transaction(async (tx) => {
      await tx.kysely.insertInto('workspaces').values(ws('a')).execute()
      await tx.run("INSERT INTO workspaces (id, name, region, created_at) VALUES ('b', 'b', 'us', 'x')")
      throw new Error('boom')
    }),
    /boom/,
  )
  t.same(await db.kysely.selectFrom('workspaces').select('id').execute(), [], 'both writes rolled back')
  await db.transaction(async (tx) => {
    await tx.kysely.insertInto('workspaces').values(ws('a')).execute()
    await tx.run("INSERT INTO workspaces (id, name, region, created_at) VALUES ('b', 'b', 'us', 'x')")
  })
  t.same(
    (await db.kysely.selectFrom('workspaces').select('id').orderBy('id').execute()).map((r) => r.id),
    ['a', 'b'],
  )
})

eachEngine(
  t,
  'migrate applies nothing twice and refuses a database newer than the code',
  async (t, db) => {
    const again = await migrate(db)
    t.same(again.applied, [], 'second run applies nothing')
    const latest = (await loadMigrations()).at(-1)!.version
    t.equal(again.version, latest)
    await db.kysely.insertInto('schema_migrations').values({ version: 9999, name: 'from the future', applied_at: '2030-01-01T00:00:00.000Z' }).execute()
    await t.rejects(migrate(db), SchemaTooNewError)
    await t.rejects(buildApp(testConfig(), { db }), SchemaTooNewError, 'the app does not start on it')
  },
  { migrate: true },
)

t.test('two processes migrating one empty PostgreSQL database at once apply each version once', async (t) => {
  const url = requirePostgres(t, 'concurrent migrations on PostgreSQL')
  if (!url) return
  const schema = await freshPostgresSchema(t, url)
  const a = await PostgresDatabase.open(url, { busyTimeoutMs: 30_000, schema, max: 2 })
  const b = await PostgresDatabase.open(url, { busyTimeoutMs: 30_000, schema, max: 2 })
  t.after(() => Promise.all([a.close(), b.close()]))
  const [ra, rb] = await Promise.all([migrate(a), migrate(b)])
  const all = (await loadMigrations()).map((m) => m.version)
  t.same(
    [...ra.applied, ...rb.applied].sort((x, y) => x - y),
    all,
    'every version applied by exactly one of them',
  )
  t.ok(ra.applied.length === 0 || rb.applied.length === 0, 'the second waited on the lock and found nothing left')
  const rows = await a.kysely.selectFrom('schema_migrations').select('version').execute()
  t.equal(rows.length, all.length)
})

t.test('two SQLite connections migrating one file at once apply each version once', async (t) => {
  const file = path.join(tempDir(), 'svc.sqlite')
  const a = await openEngine(t, 'sqlite', { file, migrate: false, busyTimeoutMs: 10_000 })
  const b = await openEngine(t, 'sqlite', { file, migrate: false, busyTimeoutMs: 10_000 })
  const [ra, rb] = await Promise.all([migrate(a), migrate(b)])
  const all = (await loadMigrations()).map((m) => m.version)
  t.same(
    [...ra.applied, ...rb.applied].sort((x, y) => x - y),
    all,
  )
})

t.test('a SQLite database made before numbered migrations upgrades in place', async (t) => {
  const file = path.join(tempDir(), 'svc.sqlite')
  await createLegacyDatabase(file)
  const db = await SqliteDatabase.open(file, 2000)
  t.after(() => db.close())
  await db.run("INSERT INTO workspaces (id, name, region, created_at) VALUES ('ws_old', 'Old', 'eu', '2026-05-01T00:00:00.000Z')")
  await db.run(
    "INSERT INTO screens (id, workspace_id, name, created_at, updated_at, desired_version, panel_set_id) VALUES ('scr_old', 'ws_old', 'Lobby', '2026-05-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z', 4, 2)",
  )
  const r = await migrate(db)
  // The legacy database stops at 50: 60 and every later version are what is left to apply.
  t.same(
    r.applied,
    (await loadMigrations()).map((m) => m.version).filter((v) => v >= 60),
    'only the versions added since are applied',
  )
  const s = await db.kysely.selectFrom('screens').select(['id', 'desired_version', 'panel_set_id', 'status']).executeTakeFirstOrThrow()
  t.same(s, { id: 'scr_old', desired_version: 4, panel_set_id: 2, status: 'offline' }, 'old rows intact')
  await db.kysely
    .insertInto('events_outbox')
    .values({ id: 'e1', workspace_id: 'ws_old', event: 'x', data: '{}', occurred_at: '2026-05-01T00:00:00.000Z' })
    .execute()
  const names = await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`.execute(db.kysely)
  t.ok(names.rows.some((n) => n.name === 'events_outbox'))
})

t.test('pnpm cloud migrate: prints the result; refuses a newer database with exit 1', async (t) => {
  const dir = tempDir()
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_')) env[k] = v
  env.SVC_DATA_DIR = dir
  const run = () =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['scripts/cloud.mjs', 'migrate'], { cwd: ROOT, env })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += d))
      child.stderr.on('data', (d) => (stderr += d))
      child.on('error', reject)
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    })
  const first = await run()
  t.equal(first.code, 0, first.stderr)
  const out = JSON.parse(first.stdout)
  t.equal(out.engine, 'sqlite')
  t.same(
    out.applied,
    (await loadMigrations()).map((m) => m.version),
  )
  const second = await run()
  t.same(JSON.parse(second.stdout).applied, [])
  const db = await SqliteDatabase.open(path.join(dir, 'svc.sqlite'), 2000)
  await db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'future', 'x')")
  await db.close()
  const third = await run()
  t.equal(third.code, 1)
  t.match(third.stderr, /schema version\(s\) 9999/)
  t.notMatch(third.stderr, /\n\s+at /, 'no stack trace')
})

t.test('the harness: without SVC_TEST_DATABASE_URL the PostgreSQL half skips (fails when CI=true)', async (t) => {
  t.comment(postgresUrl() ? 'PostgreSQL configured: both engines run' : 'PostgreSQL not configured: the [postgres] subtests skip')
})

eachEngine(
  t,
  'migration 590 keeps one open log request per screen (the newest) and then refuses a second',
  async (t, db) => {
    const all = await loadMigrations()
    await migrate(
      db,
      all.filter((m) => m.version < 590),
    )
    const row = (id: string, screen: string, state: string) => ({
      id,
      workspace_id: 'ws_1',
      screen_id: screen,
      state,
      reason: null,
      max_lines: 1000,
      since: null,
      requested_at: `2026-06-01T12:00:0${id.slice(-1)}.000Z`,
      sent_at: null,
      completed_at: null,
      uploaded_at: null,
      line_count: null,
      truncated: null,
      size_bytes: null,
      lines: null,
    })
    await db.kysely
      .insertInto('agent_logs')
      .values([row('alog_0', 'scr_a', 'done'), row('alog_1', 'scr_a', 'pending'), row('alog_2', 'scr_a', 'pending'), row('alog_3', 'scr_b', 'pending')])
      .execute()
    await migrate(db)
    const rows = await db.kysely.selectFrom('agent_logs').select(['id', 'state', 'reason', 'completed_at']).orderBy('id').execute()
    t.same(rows, [
      { id: 'alog_0', state: 'done', reason: null, completed_at: null },
      { id: 'alog_1', state: 'expired', reason: 'closed: one open request per screen', completed_at: '2026-06-01T12:00:01.000Z' },
      { id: 'alog_2', state: 'pending', reason: null, completed_at: null },
      { id: 'alog_3', state: 'pending', reason: null, completed_at: null },
    ])
    await t.rejects(
      db.kysely
        .insertInto('agent_logs')
        .values(row('alog_4', 'scr_a', 'pending'))
        .execute(),
      'a second open request of one screen is refused',
    )
    await db.kysely
      .insertInto('agent_logs')
      .values(row('alog_5', 'scr_a', 'done'))
      .execute()
    t.pass('closed ones are not held')
  },
  { migrate: false },
)

eachEngine(
  t,
  '0622: emergencies and CAP feeds made before it keep their rows; content may then be null',
  async (t, db) => {
    const all = await loadMigrations()
    await migrate(
      db,
      all.filter((m) => m.version < 622),
    )
    const k = db.kysely
    const at = '2026-06-01T12:00:00.000Z'
    await k.insertInto('workspaces').values({ id: 'ws1', name: 'W', region: 'us', created_at: at }).execute()
    const emergency = {
      id: 'emg_old',
      workspace_id: 'ws1',
      node_id: null,
      content_kind: 'media',
      content_id: 'med_1',
      content_name: 'Map',
      message: 'Evacuate',
      scope_kind: 'all',
      scope_node_id: null,
      status: 'active',
      screen_count: 1,
      screens_released: null,
      started_at: at,
      cleared_at: null,
      created_by: 'key:k',
      cleared_by: null,
      reach_at: null,
      scope_group_id: null,
      presentation: 'banner',
      source_cap_feed_id: 'capf_1',
      source_cap_alert_id: 'capa_1',
      alert: '{"severity":"Extreme"}',
    }
    await k.insertInto('emergencies').values(emergency).execute()
    await k.insertInto('emergency_screens').values({ emergency_id: 'emg_old', screen_id: 'scr_1', active: 1 }).execute()
    const feed = {
      id: 'capf_1',
      workspace_id: 'ws1',
      node_id: null,
      name: 'F',
      mode: 'push',
      url: null,
      interval_seconds: 60,
      accept: '{}',
      target: '{}',
      content_kind: 'media',
      content_id: 'med_1',
      area_match: 'target',
      presentation: '{}',
      language: 'en',
      push_secret_hash: 'h',
      etag: null,
      last_modified: null,
      next_fetch_at: null,
      last_fetched_at: null,
      last_error: null,
      created_at: at,
      updated_at: at,
    }
    await k.insertInto('cap_feeds').values(feed).execute()
    const r = await migrate(db)
    t.ok(r.applied.includes(622))
    t.same(await k.selectFrom('emergencies').selectAll().execute(), [emergency], 'the emergency is intact, column for column')
    t.match(await k.selectFrom('emergency_screens').selectAll().execute(), [{ emergency_id: 'emg_old', screen_id: 'scr_1', active: 1 }])
    t.same(await k.selectFrom('cap_feeds').selectAll().execute(), [feed], 'the feed is intact')
    await k
      .insertInto('emergencies')
      .values({ ...emergency, id: 'emg_new', content_kind: null, content_id: null, content_name: null })
      .execute()
    await k
      .insertInto('cap_feeds')
      .values({ ...feed, id: 'capf_2', content_kind: null, content_id: null })
      .execute()
    t.equal((await k.selectFrom('emergencies').select('id').where('content_kind', 'is', null).execute()).length, 1, 'content may be null')
    // The reads that use the indexes still find them (SQLite rebuilt the tables).
    t.equal((await k.selectFrom('emergencies').select('id').where('source_cap_alert_id', '=', 'capa_1').execute()).length, 2)
    if (db.dialect === 'sqlite') {
      const names = (
        await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('emergencies', 'cap_feeds') ORDER BY name`.execute(k)
      ).rows
      t.same(
        names.map((n) => n.name).filter((n) => !n.startsWith('sqlite_autoindex')),
        ['cap_feeds_due', 'cap_feeds_workspace', 'emergencies_cap_alert', 'emergencies_workspace'],
      )
    }
  },
  { migrate: false },
)
