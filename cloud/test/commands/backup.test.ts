// `cloud backup` and `cloud restore` as real processes (the CLI's bundle), with Node alone:
// a backup taken while a writer commits rows to the running service restores, into an
// empty data folder, to a database that passes `PRAGMA integrity_check` and holds every row
// committed before the backup began, with the media files; a damaged or partial backup and a
// folder that is not empty are refused with a message and a non-zero exit, writing nothing;
// on PostgreSQL the backup holds the media and says which pg_dump to run.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import sqlite3 from 'sqlite3'
import { servicesOf } from '../../src/app.js'
import { testConfig } from '../../src/config.js'
import { cleanEnv, cloudCli, startRunning, tempDir } from '../fixtures/processes.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64')

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** `pnpm cloud <args>` on the data folder `dataDir`; resolves with its exit and output (a hang guard of minutes fails the test). */
async function cli(t: Test, dataDir: string, args: string[], extra: Record<string, string> = {}): Promise<Run> {
  let stdout = ''
  let stderr = ''
  const p = cloudCli(t, args, cleanEnv({ SVC_DATA_DIR: dataDir, ...extra }))
  p.child.stdout!.on('data', (d: string) => (stdout += d))
  p.child.stderr!.on('data', (d: string) => (stderr += d))
  const { code } = await p.exited
  return { code, stdout, stderr }
}

function query<T>(file: string, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => {
      if (err) return reject(err)
      db.all(sql, (err2, rows) => db.close(() => (err2 ? reject(err2) : resolve(rows as T[]))))
    })
  })
}

/** A SQLite service running in this process on a fresh data folder, with a workspace, its key, one uploaded image. */
async function service(t: Test) {
  const dataDir = tempDir(t, 'svc-backup-data-')
  // The writer below posts as fast as the service answers for as long as the backup runs
  // (seconds on a busy machine): a workspace limit it cannot reach, so no 429 ends it.
  const running = await startRunning(
    t,
    testConfig({ dataDir, dbFile: path.join(dataDir, 'svc.sqlite'), host: '127.0.0.1', httpPort: 0, mqttPort: -1, rateLimitPerMinute: 1_000_000 }),
  )
  const s = servicesOf(running.app)
  const ws = await s.workspaces.create('Backup test', 'us')
  const apiKey = (await s.apiKeys.createRoot(ws.id, ws.region, 'Owner', 'all')).secret
  const base = `http://127.0.0.1:${running.httpPort}`
  const form = new FormData()
  form.append('file', new Blob([PNG], { type: 'image/png' }), 'dot.png')
  const up = await fetch(`${base}/v1/media/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}` },
    body: form,
    signal: AbortSignal.timeout(HANG_GUARD_MS),
  })
  if (up.status !== 201) throw new Error(`upload answered ${up.status}: ${await up.text()}`)
  return { dataDir, running, base, apiKey, media: ((await up.json()) as { data: { id: string } }).data }
}

t.test('a backup taken while a writer commits restores to a sound database with every row committed before it began, and the media', async (t) => {
  const svc = await service(t)
  // The writer: locations created one after another through the API; an id is committed once its answer came.
  const committed: string[] = []
  let writing = true
  // Its failure is kept and asserted below (a rejection left unawaited would end the process).
  const writer: Promise<Error | undefined> = (async () => {
    for (let i = 0; writing; i++) {
      const res = await fetch(`${svc.base}/v1/nodes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Site ${i}` }),
        signal: AbortSignal.timeout(HANG_GUARD_MS),
      })
      if (res.status !== 201) throw new Error(`the writer's POST /v1/nodes answered ${res.status}`)
      committed.push(((await res.json()) as { data: { id: string } }).data.id)
    }
    return undefined
  })().catch((e: unknown) => e as Error)
  // Some rows first, so the backup has something to miss if it were not consistent.
  let failed: Error | undefined
  void writer.then((e) => (failed = e))
  while (committed.length < 20 && !failed) await new Promise((r) => setImmediate(r))
  if (failed) throw failed
  const before = new Set(committed)
  const out = path.join(tempDir(t, 'svc-backup-out-'), 'copy')
  const run = await cli(t, svc.dataDir, ['backup', '--out', out])
  const duringBackup = committed.length - before.size
  writing = false
  t.equal((await writer)?.message, undefined, 'every write the writer made was answered 201')
  t.equal(run.code, 0, `backup exits 0 (stderr: ${run.stderr})`)
  const result = JSON.parse(run.stdout.trim()) as { engine: string; mediaFiles: number; database: string }
  t.equal(result.engine, 'sqlite')
  t.equal(result.mediaFiles, 1, 'the uploaded file is in it')
  t.ok(duringBackup > 0, `the writer kept committing while the backup ran (${duringBackup} rows)`)
  const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')) as { files: { path: string; sha256: string }[] }
  t.same(
    manifest.files.map((f) => f.path.split('/')[0]),
    ['svc.sqlite', 'media'],
    'the manifest lists the database and the media file',
  )

  // Restore into an empty folder, then open what it restored.
  const target = path.join(tempDir(t, 'svc-restore-'), 'data')
  const restored = await cli(t, target, ['restore', '--from', out])
  t.equal(restored.code, 0, `restore exits 0 (stderr: ${restored.stderr})`)
  t.match(JSON.parse(restored.stdout.trim()), { engine: 'sqlite', integrity: 'ok', mediaFiles: 1 })
  const db = path.join(target, 'svc.sqlite')
  t.same(await query(db, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }], 'the restored database passes integrity_check')
  const ids = new Set((await query<{ id: string }>(db, 'SELECT id FROM nodes')).map((r) => r.id))
  const missing = [...before].filter((id) => !ids.has(id))
  t.same(missing, [], `every one of the ${before.size} rows committed before the backup began is there`)
  const media = (await query<{ id: string; sha256: string }>(db, 'SELECT id, sha256 FROM media'))[0]
  t.equal(media?.id, svc.media.id, 'the media row is there')
  const file = path.join(target, 'media', media!.sha256.slice(0, 2), media!.sha256)
  t.same(fs.readFileSync(file), PNG, 'and its file, byte for byte')
})

t.test('a damaged or partial backup, or a folder that is not empty, is refused with a message and exit 1, writing nothing', async (t) => {
  const svc = await service(t)
  const good = path.join(tempDir(t, 'svc-backup-out-'), 'copy')
  const made = await cli(t, svc.dataDir, ['backup', '--out', good])
  t.equal(made.code, 0, `backup exits 0 (stderr: ${made.stderr})`)
  const manifest = JSON.parse(fs.readFileSync(path.join(good, 'manifest.json'), 'utf8')) as { files: { path: string }[] }
  const mediaPath = manifest.files.find((f) => f.path.startsWith('media/'))!.path

  const copyOf = (name: string): string => {
    const dir = path.join(tempDir(t, 'svc-backup-bad-'), name)
    fs.cpSync(good, dir, { recursive: true })
    return dir
  }
  const flipped = copyOf('flipped')
  const dbBytes = fs.readFileSync(path.join(flipped, 'svc.sqlite'))
  dbBytes.writeUInt8(dbBytes.readUInt8(dbBytes.length - 100) ^ 0xff, dbBytes.length - 100)
  fs.writeFileSync(path.join(flipped, 'svc.sqlite'), dbBytes)
  const partial = copyOf('partial')
  fs.rmSync(path.join(partial, ...mediaPath.split('/')))
  const unfinished = copyOf('unfinished')
  fs.rmSync(path.join(unfinished, 'manifest.json'))
  const occupied = tempDir(t, 'svc-restore-occupied-')
  fs.writeFileSync(path.join(occupied, 'notes.txt'), 'mine')

  const targets = [0, 1, 2].map(() => path.join(tempDir(t, 'svc-restore-'), 'data'))
  const [bad, missing, noManifest, notEmpty, backupOver, noOut] = await Promise.all([
    cli(t, targets[0]!, ['restore', '--from', flipped]),
    cli(t, targets[1]!, ['restore', '--from', partial]),
    cli(t, targets[2]!, ['restore', '--from', unfinished]),
    cli(t, occupied, ['restore', '--from', good]),
    cli(t, svc.dataDir, ['backup', '--out', good]),
    cli(t, svc.dataDir, ['backup']),
  ])
  const refused = (run: Run, message: RegExp, what: string): void => {
    t.equal(run.code, 1, `${what}: exit 1`)
    t.equal(run.stdout, '', `${what}: nothing on stdout`)
    t.match(run.stderr, message, `${what}: says why`)
    t.notMatch(run.stderr, /^\s+at /m, `${what}: no stack trace`)
  }
  refused(bad, /svc\.sqlite does not match its checksum.*damaged, restore refused/, 'a changed byte')
  refused(missing, /media\/[0-9a-f]{2}\/[0-9a-f]{64} is missing from the backup: it is partial, restore refused/, 'a missing file')
  refused(noManifest, /holds no manifest\.json: not a backup, or one that did not finish/, 'no manifest')
  refused(notEmpty, /data folder .* is not empty: restore goes into an empty folder only/, 'a folder in use')
  refused(backupOver, /is not empty: back up into a new or empty folder/, 'a backup over another')
  t.equal(noOut.code, 2, 'backup without --out is a usage error')
  t.match(noOut.stderr, /backup needs --out DIR/)
  for (const dir of targets) t.notOk(fs.existsSync(dir) && fs.readdirSync(dir).length, `nothing written into ${path.basename(path.dirname(dir))}`)
  t.same(fs.readdirSync(occupied), ['notes.txt'], 'the occupied folder is untouched')
})

t.test('on PostgreSQL the backup holds the media only and names the pg_dump to run', async (t) => {
  const svc = await service(t)
  const out = path.join(tempDir(t, 'svc-backup-out-'), 'copy')
  // The backup reads no database on PostgreSQL: the URL only says which engine holds it.
  const run = await cli(t, svc.dataDir, ['backup', '--out', out], { SVC_DATABASE_URL: 'postgres://svc:secret@127.0.0.1:1/svc' })
  t.equal(run.code, 0, `backup exits 0 (stderr: ${run.stderr})`)
  const result = JSON.parse(run.stdout.trim()) as { engine: string; database: string | null; mediaFiles: number; pgDump: string }
  t.match(result, { engine: 'postgres', database: null, mediaFiles: 1 })
  t.match(result.pgDump, /^pg_dump -Fc --no-owner -d "\$SVC_DATABASE_URL" -f \S+svc\.dump$/, 'the pg_dump line, without the password')
  t.notMatch(run.stdout + run.stderr, /secret/, 'the password is never printed')
  t.match(run.stderr, /not in this backup: back it up with/)
  t.notOk(fs.existsSync(path.join(out, 'svc.sqlite')), 'no SQLite file in it')
})
