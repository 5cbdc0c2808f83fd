// `cloud backup --out DIR` and `cloud restore --from DIR`, with Node alone (no sqlite3
// command-line tool, no rsync).
//
// Backup: the SQLite database through the driver's online backup API (one consistent
// snapshot of the running database, WAL included, while the service keeps writing), then
// the media files (content-addressed and written once, so copying them after the snapshot
// catches every file it names), then `manifest.json` with each file's size and SHA-256,
// written last: a backup without it did not finish. On PostgreSQL the media only, and the
// pg_dump line to run for the database.
//
// Restore: into an empty data folder only; every file of the manifest is checked (present,
// its size, its SHA-256) before anything is written, and again as it is copied; the
// restored database must pass `PRAGMA integrity_check`. A refusal writes nothing (or
// removes what it wrote) and says why.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import sqlite3 from 'sqlite3'
import type { Config } from './config.js'
import { lockDataDir } from './dataLock.js'

/** A backup or restore that cannot go on, with what to do about it. */
export class BackupError extends Error {}

export const MANIFEST = 'manifest.json'
const FORMAT = 'svc-backup'
const DB_NAME = 'svc.sqlite'
const MEDIA = 'media'
/** Content-addressed media files: `<first 2 hex>/<sha256>` (MediaStore); temp files and upload parts are not kept. */
const MEDIA_FILE = /^[0-9a-f]{2}\/[0-9a-f]{64}$/

export interface ManifestFile {
  /** Relative to the backup folder, `/`-separated. */
  path: string
  bytes: number
  sha256: string
}

export interface Manifest {
  format: typeof FORMAT
  version: 1
  createdAt: string
  engine: 'sqlite' | 'postgres'
  /** The database file (SQLite), or null (PostgreSQL: pg_dump). */
  database: string | null
  files: ManifestFile[]
}

/** The node-sqlite3 backup handle (not in the package's types). */
interface SqliteBackup {
  step(pages: number, cb: (err: Error | null) => void): void
  finish(cb?: (err: Error | null) => void): void
  completed: boolean
  failed: boolean
  remaining: number
  pageCount: number
}

function mediaRoot(config: Pick<Config, 'dataDir' | 'mediaDir'>): string {
  return config.mediaDir ?? path.join(config.dataDir, MEDIA)
}

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  try {
    return (await fsp.readdir(dir)).length === 0
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return true
    throw e
  }
}

function openSqlite(file: string, mode: number): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, mode, (err) => (err ? reject(err) : resolve(db)))
  })
}

function closeSqlite(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())))
}

/** A consistent copy of the SQLite database `src` in `dest`, taken while other connections write. */
async function snapshotSqlite(src: string, dest: string, busyTimeoutMs: number): Promise<void> {
  if (!fs.existsSync(src)) throw new BackupError(`no database at ${src} (SVC_DATA_DIR / SVC_DB_FILE): nothing to back up`)
  const db = await openSqlite(src, sqlite3.OPEN_READWRITE)
  try {
    db.configure('busyTimeout', busyTimeoutMs)
    const backup = (db as unknown as { backup(file: string, cb: (err: Error | null) => void): SqliteBackup }).backup(dest, () => undefined)
    // Every page in one step: one read transaction, so the copy is the database as it was
    // when the step began (WAL lets the service keep writing meanwhile). A busy database is
    // retried by the driver (its retryErrors), step after step, until the step completes.
    await new Promise<void>((resolve, reject) => {
      const step = (): void =>
        backup.step(-1, (err) => {
          if (err) return reject(err)
          if (backup.completed) return resolve()
          if (backup.failed) return reject(new Error('the SQLite backup failed'))
          setImmediate(step)
        })
      step()
    })
    await new Promise<void>((resolve, reject) => backup.finish((err) => (err ? reject(err) : resolve())))
  } finally {
    await closeSqlite(db)
  }
}

/** Copies `from` to `to` (created exclusively), hashing the bytes on the way; answers their size and SHA-256. */
async function copyHashed(from: string, to: string): Promise<{ bytes: number; sha256: string }> {
  await fsp.mkdir(path.dirname(to), { recursive: true })
  const hash = createHash('sha256')
  let bytes = 0
  await pipeline(
    fs.createReadStream(from),
    new Transform({
      transform(chunk: Buffer, _enc, cb) {
        hash.update(chunk)
        bytes += chunk.length
        cb(null, chunk)
      },
    }),
    fs.createWriteStream(to, { flags: 'wx' }),
  )
  return { bytes, sha256: hash.digest('hex') }
}

async function hashFile(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256')
  let bytes = 0
  for await (const chunk of fs.createReadStream(file)) {
    hash.update(chunk as Buffer)
    bytes += (chunk as Buffer).length
  }
  return { bytes, sha256: hash.digest('hex') }
}

/** The content-addressed media files under `root`, as `<2 hex>/<sha256>`. */
async function mediaFiles(root: string): Promise<string[]> {
  const out: string[] = []
  let dirs: string[]
  try {
    dirs = await fsp.readdir(root)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return out
    throw e
  }
  for (const d of dirs.sort()) {
    if (!/^[0-9a-f]{2}$/.test(d)) continue
    for (const f of (await fsp.readdir(path.join(root, d))).sort()) if (MEDIA_FILE.test(`${d}/${f}`)) out.push(`${d}/${f}`)
  }
  return out
}

export interface BackupResult {
  out: string
  engine: 'sqlite' | 'postgres'
  database: string | null
  mediaFiles: number
  bytes: number
  /** On PostgreSQL: the command that backs the database up. */
  pgDump?: string
}

export async function backup(
  config: Pick<Config, 'dataDir' | 'dbFile' | 'databaseUrl' | 'mediaDir' | 'dbBusyTimeoutMs'>,
  outDir: string,
  now: () => Date = () => new Date(),
): Promise<BackupResult> {
  const out = path.resolve(outDir)
  if (!(await isEmptyOrMissing(out))) throw new BackupError(`${out} is not empty: back up into a new or empty folder`)
  if (config.dbFile === ':memory:') throw new BackupError('SVC_DB_FILE is :memory:, there is no database file to back up')
  await fsp.mkdir(out, { recursive: true })
  const createdAt = now().toISOString()
  const files: ManifestFile[] = []
  const engine = config.databaseUrl ? 'postgres' : 'sqlite'
  if (engine === 'sqlite') {
    await snapshotSqlite(config.dbFile, path.join(out, DB_NAME), config.dbBusyTimeoutMs)
    files.push({ path: DB_NAME, ...(await hashFile(path.join(out, DB_NAME))) })
  }
  const root = mediaRoot(config)
  for (const rel of await mediaFiles(root)) {
    try {
      files.push({ path: `${MEDIA}/${rel}`, ...(await copyHashed(path.join(root, rel), path.join(out, MEDIA, rel))) })
    } catch (e) {
      // Released after the snapshot (no owner left): the snapshot may name it, the copy cannot have it.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
      await fsp.rm(path.join(out, MEDIA, rel), { force: true })
    }
  }
  const manifest: Manifest = { format: FORMAT, version: 1, createdAt, engine, database: engine === 'sqlite' ? DB_NAME : null, files }
  // Last, and whole or not at all: a folder without it is a backup that did not finish.
  const tmp = path.join(out, `${MANIFEST}.tmp`)
  await fsp.writeFile(tmp, `${JSON.stringify(manifest, null, 2)}\n`)
  await fsp.rename(tmp, path.join(out, MANIFEST))
  const result: BackupResult = {
    out,
    engine,
    database: manifest.database && path.join(out, manifest.database),
    mediaFiles: files.filter((f) => f.path.startsWith(`${MEDIA}/`)).length,
    bytes: files.reduce((n, f) => n + f.bytes, 0),
  }
  if (engine === 'postgres') result.pgDump = `pg_dump -Fc --no-owner -d "$SVC_DATABASE_URL" -f ${shellQuote(path.join(out, 'svc.dump'))}`
  return result
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`
}

/** The manifest of the backup in `dir`, checked for shape; throws a BackupError saying what is wrong. */
async function readManifest(dir: string): Promise<Manifest> {
  let text: string
  try {
    text = await fsp.readFile(path.join(dir, MANIFEST), 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new BackupError(`${dir} holds no ${MANIFEST}: not a backup, or one that did not finish (the manifest is written last)`)
    throw e
  }
  let m: Manifest
  try {
    m = JSON.parse(text) as Manifest
  } catch {
    throw new BackupError(`${path.join(dir, MANIFEST)} is not valid JSON: the backup is damaged`)
  }
  const fileOk = (f: ManifestFile): boolean =>
    typeof f?.path === 'string' &&
    (f.path === DB_NAME || (f.path.startsWith(`${MEDIA}/`) && MEDIA_FILE.test(f.path.slice(MEDIA.length + 1)))) &&
    Number.isInteger(f.bytes) &&
    f.bytes >= 0 &&
    typeof f.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(f.sha256)
  if (m?.format !== FORMAT || m.version !== 1 || !Array.isArray(m.files) || !m.files.every(fileOk) || (m.engine !== 'sqlite' && m.engine !== 'postgres'))
    throw new BackupError(
      `${path.join(dir, MANIFEST)} is not a manifest this release reads (format ${FORMAT}, version 1): the backup is damaged or from another program`,
    )
  if (m.engine === 'sqlite' && !m.files.some((f) => f.path === DB_NAME)) throw new BackupError(`the manifest names no ${DB_NAME}: the backup is damaged`)
  return m
}

export interface RestoreResult {
  from: string
  engine: 'sqlite' | 'postgres'
  database: string | null
  mediaFiles: number
  bytes: number
  integrity: 'ok' | null
  /** On PostgreSQL: the command that restores the database. */
  pgRestore?: string
}

export async function restore(config: Pick<Config, 'dataDir' | 'dbFile' | 'databaseUrl' | 'mediaDir'>, fromDir: string): Promise<RestoreResult> {
  const from = path.resolve(fromDir)
  const manifest = await readManifest(from)
  if (manifest.engine === 'sqlite' && config.databaseUrl)
    throw new BackupError('this backup holds a SQLite database, but SVC_DATABASE_URL names PostgreSQL: unset it to restore onto SQLite')
  if (manifest.engine === 'sqlite' && config.dbFile === ':memory:') throw new BackupError('SVC_DB_FILE is :memory:, there is no file to restore into')
  // Every file present and whole before anything is written.
  for (const f of manifest.files) {
    const file = path.join(from, ...f.path.split('/'))
    let got: { bytes: number; sha256: string }
    try {
      got = await hashFile(file)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new BackupError(`${f.path} is missing from the backup: it is partial, restore refused`)
      throw e
    }
    if (got.bytes !== f.bytes || got.sha256 !== f.sha256)
      throw new BackupError(
        `${f.path} does not match its checksum in the manifest (${got.bytes} bytes, sha256 ${got.sha256}): the backup is damaged, restore refused`,
      )
  }
  const dataDir = path.resolve(config.dataDir)
  const media = path.resolve(mediaRoot(config))
  if (!(await isEmptyOrMissing(dataDir)))
    throw new BackupError(`the data folder ${dataDir} (SVC_DATA_DIR) is not empty: restore goes into an empty folder only`)
  if (!(await isEmptyOrMissing(media))) throw new BackupError(`the media folder ${media} (SVC_MEDIA_DIR) is not empty: restore goes into an empty folder only`)
  const dbFile = manifest.engine === 'sqlite' ? path.resolve(config.dbFile) : null
  if (dbFile && fs.existsSync(dbFile)) throw new BackupError(`${dbFile} (SVC_DB_FILE) exists: restore goes into an empty data folder only`)
  // No service starts on the folder while it is being filled.
  const lock = lockDataDir(dataDir)
  try {
    let bytes = 0
    for (const f of manifest.files) {
      const target = f.path === DB_NAME ? dbFile! : path.join(media, ...f.path.slice(MEDIA.length + 1).split('/'))
      const got = await copyHashed(path.join(from, ...f.path.split('/')), target)
      if (got.bytes !== f.bytes || got.sha256 !== f.sha256) throw new BackupError(`${f.path} changed while it was restored: restore refused`)
      bytes += got.bytes
    }
    let integrity: 'ok' | null = null
    if (dbFile) integrity = await integrityCheck(dbFile)
    const result: RestoreResult = {
      from,
      engine: manifest.engine,
      database: dbFile,
      mediaFiles: manifest.files.filter((f) => f.path.startsWith(`${MEDIA}/`)).length,
      bytes,
      integrity,
    }
    if (manifest.engine === 'postgres') result.pgRestore = 'pg_restore --no-owner -d "$SVC_DATABASE_URL" <the pg_dump file>'
    return result
  } catch (e) {
    // Nothing half-restored stays: both folders were empty (and locked since).
    await clear(media).catch(() => undefined)
    if (dbFile) for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) await fsp.rm(f, { force: true }).catch(() => undefined)
    await clear(dataDir, ['svc.lock']).catch(() => undefined)
    throw e
  } finally {
    lock.release()
  }
}

/** Removes everything inside `dir` but the names in `keep`. */
async function clear(dir: string, keep: string[] = []): Promise<void> {
  for (const entry of await fsp.readdir(dir).catch(() => [] as string[]))
    if (!keep.includes(entry)) await fsp.rm(path.join(dir, entry), { recursive: true, force: true })
}

/** `PRAGMA integrity_check` of a database file: 'ok', or a BackupError with what it found. */
export async function integrityCheck(file: string): Promise<'ok'> {
  let db: sqlite3.Database
  try {
    db = await openSqlite(file, sqlite3.OPEN_READWRITE)
  } catch (e) {
    throw new BackupError(`the restored database cannot be opened (${(e as Error).message}): the backup is damaged`)
  }
  try {
    const rows = await new Promise<{ integrity_check: string }[]>((resolve, reject) =>
      db.all('PRAGMA integrity_check', (err, r) => (err ? reject(err) : resolve(r as { integrity_check: string }[]))),
    ).catch((e: Error) => {
      throw new BackupError(`the restored database cannot be read (${e.message}): the backup is damaged`)
    })
    const found = rows.map((r) => r.integrity_check)
    if (found.length !== 1 || found[0] !== 'ok')
      throw new BackupError(`the restored database fails its integrity check (${found.slice(0, 3).join('; ')}): the backup is damaged`)
    return 'ok'
  } finally {
    await closeSqlite(db)
  }
}
