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

const PREPARABLE = /^\s*select\b/i
/**
 * Writes kept prepared too: an INSERT whose rows come as one JSON parameter
 * (`… FROM json_each(?)`), a text that does not change with the data it writes.
 */
const PREPARABLE_WRITE = /^\s*insert\b[^;]*\bjson_each\(\?\)[^;?]*$/i

/** Read statements kept prepared per connection (by text); the oldest is finalised beyond this. */
const PREPARED_READS = 128

class SqliteConnection implements DatabaseConnection {
  /**
   * Reads (and the JSON-batch inserts) prepared once and run again with new parameters: `db.all(sql)` prepares and
   * finalises a statement on every call, about half of a small read's CPU. The FIFO lock
   * keeps one holder on the connection, and a statement queues its own runs.
   */
  private readonly reads = new Map<string, sqlite3.Statement>()

  constructor(private readonly db: sqlite3.Database) {}

  /** The kept statement for `text`, prepared now if new (a failed prepare rejects and keeps nothing). */
  private async prepared(text: string): Promise<sqlite3.Statement> {
    const hit = this.reads.get(text)
    if (hit) return hit
    const st = await new Promise<sqlite3.Statement>((resolve, reject) => {
      const made: sqlite3.Statement = this.db.prepare(text, (err: Error | null) => (err ? reject(err) : resolve(made)))
    })
    const raced = this.reads.get(text)
    if (raced) {
      st.finalize()
      return raced
    }
    this.reads.set(text, st)
    if (this.reads.size > PREPARED_READS) {
      const [oldest, old] = this.reads.entries().next().value as [string, sqlite3.Statement]
      this.reads.delete(oldest)
      old.finalize()
    }
    return st
  }

  executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    const params = q.parameters as unknown[]
    if (PREPARABLE.test(q.sql) && !/\breturning\b/i.test(q.sql)) {
      return this.prepared(q.sql).then(
        (st) =>
          new Promise((resolve, reject) => {
            st.all(params, (err: Error | null, rows: R[]) => (err ? reject(mapSqliteError(err)) : resolve({ rows })))
          }),
        (err: unknown) => Promise.reject(mapSqliteError(err)),
      )
    }
    if (PREPARABLE_WRITE.test(q.sql) && !/\breturning\b/i.test(q.sql)) {
      return this.prepared(q.sql).then(
        (st) =>
          new Promise((resolve, reject) => {
            st.run(params, function (this: sqlite3.RunResult, err: Error | null) {
              if (err) reject(mapSqliteError(err))
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
    const readOnly = this.opts.readOnly === true
    if (this.file !== ':memory:' && !readOnly) fs.mkdirSync(path.dirname(this.file), { recursive: true })
    const mode = (readOnly ? sqlite3.OPEN_READONLY : sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE) | sqlite3.OPEN_FULLMUTEX
    const db = await new Promise<sqlite3.Database>((resolve, reject) => {
      const d = new sqlite3.Database(this.file, mode, (err) => (err ? reject(err) : resolve(d)))
    })
    db.configure('busyTimeout', this.busyTimeoutMs)
    const conn = new SqliteConnection(db)
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
    await conn.executeQuery(CompiledQuery.raw('BEGIN IMMEDIATE'))
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('COMMIT'))
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('ROLLBACK')).catch(() => undefined)
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
