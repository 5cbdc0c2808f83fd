// A Kysely dialect over the `sqlite3` package: one connection in WAL mode with a busy
// timeout, handed out through a FIFO lock. A query outside a transaction holds the lock
// for one statement; a transaction holds it from BEGIN IMMEDIATE to COMMIT, so another
// request's statements never land inside it. SQLITE_BUSY becomes DatabaseBusyError (503).
import fs from 'node:fs'
import path from 'node:path'
import sqlite3 from 'sqlite3'
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely'
import { DatabaseBusyError } from '../errors.js'

/** Hands one resource to one holder at a time, in arrival order. */
export class FifoLock {
  private tail: Promise<void> = Promise.resolve()
  /** Waits for the lock; the returned function releases it. */
  async acquire(): Promise<() => void> {
    const prev = this.tail
    let release!: () => void
    this.tail = new Promise<void>((r) => (release = r))
    await prev
    return release
  }
}

export function mapSqliteError(e: unknown): unknown {
  const code = (e as { code?: string })?.code
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return new DatabaseBusyError(e)
  return e
}

const READS_ROWS = /^\s*(select|with|pragma|values|explain)\b|\breturning\b/i

function returnsRows(q: CompiledQuery): boolean {
  const kind = q.query.kind
  if (kind === 'SelectQueryNode') return true
  if (kind === 'InsertQueryNode' || kind === 'UpdateQueryNode' || kind === 'DeleteQueryNode') {
    return (q.query as { returning?: unknown }).returning !== undefined
  }
  return READS_ROWS.test(q.sql)
}

/** Statements kept prepared: reads and writes (`db.run(sql)` prepares, runs and finalises: three trips to the thread pool instead of one). */
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i

/** Statements kept prepared per connection (by text); the least recently used is finalised beyond this. */
const PREPARED_STATEMENTS = 256

class SqliteConnection implements DatabaseConnection {
  /**
   * Statements prepared once and run again with new parameters: `db.all(sql)` and
   * `db.run(sql)` prepare and finalise a statement on every call (three trips to the thread
   * pool; about half of a small read's CPU). The FIFO lock keeps one holder on the
   * connection, and a statement queues its own runs; each run resets the statement first.
   */
  private readonly reads = new Map<string, sqlite3.Statement>()

  constructor(private readonly db: sqlite3.Database) {}

  /** The kept statement for `text`, prepared now if new (a failed prepare rejects and keeps nothing). */
  private async prepared(text: string): Promise<sqlite3.Statement> {
    const hit = this.reads.get(text)
    if (hit) {
      // Most recently used last: the statement finalised first is the one unused longest.
      this.reads.delete(text)
      this.reads.set(text, hit)
      return hit
    }
    const st = await new Promise<sqlite3.Statement>((resolve, reject) => {
      const made: sqlite3.Statement = this.db.prepare(text, (err: Error | null) => (err ? reject(err) : resolve(made)))
    })
    const raced = this.reads.get(text)
    if (raced) {
      st.finalize()
      return raced
    }
    this.reads.set(text, st)
    if (this.reads.size > PREPARED_STATEMENTS) {
      const [oldest, old] = this.reads.entries().next().value as [string, sqlite3.Statement]
      this.reads.delete(oldest)
      old.finalize()
    }
    return st
  }

  /** Drops a kept statement that failed (a later run prepares it again). */
  private forget(text: string, st: sqlite3.Statement): void {
    if (this.reads.get(text) !== st) return
    this.reads.delete(text)
    st.finalize()
  }

  executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    const params = q.parameters as unknown[]
    if (PREPARABLE.test(q.sql)) {
      const rows = returnsRows(q)
      return this.prepared(q.sql).then(
        (st) =>
          new Promise((resolve, reject) => {
            const failed = (err: Error) => {
              this.forget(q.sql, st)
              reject(mapSqliteError(err))
            }
            if (rows) st.all(params, (err: Error | null, out: R[]) => (err ? failed(err) : resolve({ rows: out })))
            else
              st.run(params, function (this: sqlite3.RunResult, err: Error | null) {
                if (err) failed(err)
                else resolve({ rows: [], numAffectedRows: BigInt(this.changes) })
              })
          }),
        (err: unknown) => Promise.reject(mapSqliteError(err)),
      )
    }
    if (returnsRows(q)) {
      return new Promise((resolve, reject) => {
        this.db.all(q.sql, params, (err: Error | null, rows: R[]) => (err ? reject(mapSqliteError(err)) : resolve({ rows })))
      })
    }
    return new Promise((resolve, reject) => {
      this.db.run(q.sql, params, function (this: sqlite3.RunResult, err: Error | null) {
        if (err) reject(mapSqliteError(err))
        else resolve({ rows: [], numAffectedRows: BigInt(this.changes) })
      })
    })
  }

  /** Runs a statement without parameters in one trip to the thread pool (BEGIN, COMMIT, ROLLBACK). */
  exec(text: string): Promise<void> {
    return new Promise((resolve, reject) => this.db.exec(text, (err: Error | null) => (err ? reject(mapSqliteError(err)) : resolve())))
  }

  /** Finalises the kept statements (before the database closes). */
  async finalizeAll(): Promise<void> {
    const all = [...this.reads.values()]
    this.reads.clear()
    await Promise.all(all.map((st) => new Promise<void>((r) => st.finalize(() => r()))))
  }

  // biome-ignore lint/correctness/useYield: the interface wants a generator; sqlite3 cannot stream
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on sqlite3')
  }
}

export interface SqliteOptions {
  /** Open the file read-only (it must exist; WAL mode is the file's, set by the writer). */
  readOnly?: boolean
  /**
   * For ':memory:' only: the new database starts as a copy of this database file, page by
   * page through SQLite's online backup API (the tests' migrated template: one migration run
   * per process instead of one per database).
   */
  copyOf?: string
  /**
   * Rows of a read without ORDER BY come back in the reverse of SQLite's natural order
   * (`PRAGMA reverse_unordered_selects`). The tests' databases set it, so code or a test that
   * relies on an order it did not ask for fails on SQLite too, not only now and then on
   * PostgreSQL, which promises no order either.
   */
  reverseUnordered?: boolean
}

/** node-sqlite3's Backup (its typings leave it out). */
interface Sqlite3Backup {
  readonly completed: boolean
  step(pages: number, cb: (err: Error | null) => void): void
  finish(cb: (err: Error | null) => void): void
}
type BackupInit = (file: string, destName: string, sourceName: string, filenameIsDest: boolean, cb: (err: Error | null) => void) => Sqlite3Backup

/** Copies the database file `source` into `db`'s main database (SQLite's online backup API, every page in one step). */
function copyInto(db: sqlite3.Database, source: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // filenameIsDest false: the file is the source, `db` the destination.
    const backup: Sqlite3Backup = ((db as unknown as { backup: BackupInit }).backup.bind(db) as BackupInit)(source, 'main', 'main', false, (err) => {
      if (err) return reject(err)
      backup.step(-1, (err) => {
        backup.finish((finishErr) => {
          const e = err ?? finishErr
          if (e) reject(e)
          else if (!backup.completed) reject(new Error(`the copy of ${source} did not complete`))
          else resolve()
        })
      })
    })
  })
}

class SqliteDriver implements Driver {
  private readonly lock = new FifoLock()
  private releases = new Map<DatabaseConnection, () => void>()
  private db: sqlite3.Database | null = null
  private conn: SqliteConnection | null = null

  constructor(
    private readonly file: string,
    private readonly busyTimeoutMs: number,
    private readonly opts: SqliteOptions = {},
  ) {}

  async init(): Promise<void> {
    // Refused before anything is opened.
    if (this.opts.copyOf !== undefined && this.file !== ':memory:') throw new Error('copyOf is for an in-memory database')
    const readOnly = this.opts.readOnly === true
    if (this.file !== ':memory:' && !readOnly) fs.mkdirSync(path.dirname(this.file), { recursive: true })
    const mode = (readOnly ? sqlite3.OPEN_READONLY : sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE) | sqlite3.OPEN_FULLMUTEX
    const db = await new Promise<sqlite3.Database>((resolve, reject) => {
      const d = new sqlite3.Database(this.file, mode, (err) => (err ? reject(err) : resolve(d)))
    })
    db.configure('busyTimeout', this.busyTimeoutMs)
    if (this.opts.copyOf !== undefined) {
      await copyInto(db, this.opts.copyOf).catch(async (e) => {
        await new Promise<void>((resolve) => db.close(() => resolve()))
        throw e
      })
    }
    const conn = new SqliteConnection(db)
    if (this.opts.reverseUnordered) await conn.executeQuery(CompiledQuery.raw('PRAGMA reverse_unordered_selects = ON'))
    if (!readOnly) {
      await conn.executeQuery(CompiledQuery.raw('PRAGMA journal_mode = WAL'))
      await conn.executeQuery(CompiledQuery.raw('PRAGMA foreign_keys = ON'))
      await conn.executeQuery(CompiledQuery.raw('PRAGMA synchronous = NORMAL'))
    }
    this.db = db
    this.conn = conn
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.lock.acquire()
    if (!this.conn) {
      release()
      throw new Error('the database is closed')
    }
    this.releases.set(this.conn, release)
    return this.conn
  }

  async beginTransaction(conn: DatabaseConnection): Promise<void> {
    // IMMEDIATE takes the write lock up front, so a busy database fails here, before any work.
    await (conn as SqliteConnection).exec('BEGIN IMMEDIATE')
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await (conn as SqliteConnection).exec('COMMIT')
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await (conn as SqliteConnection).exec('ROLLBACK').catch(() => undefined)
  }

  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    const release = this.releases.get(conn)
    this.releases.delete(conn)
    release?.()
  }

  async destroy(): Promise<void> {
    const release = await this.lock.acquire()
    try {
      const db = this.db
      await this.conn?.finalizeAll()
      this.db = null
      this.conn = null
      if (db) await new Promise<void>((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())))
    } finally {
      release()
    }
  }
}

export class Sqlite3Dialect implements Dialect {
  constructor(
    private readonly file: string,
    private readonly busyTimeoutMs: number,
    private readonly opts: SqliteOptions = {},
  ) {}
  createDriver(): Driver {
    return new SqliteDriver(this.file, this.busyTimeoutMs, this.opts)
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler()
  }
  createAdapter() {
    return new SqliteAdapter()
  }
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own signature
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db)
  }
}
