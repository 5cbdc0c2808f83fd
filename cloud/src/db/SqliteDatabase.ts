// SQLite through `sqlite3`: one connection in WAL mode with a busy timeout. The callback
// API is wrapped once here. Statements run one at a time through a FIFO lock so a
// transaction's BEGIN…COMMIT is never interleaved with another request's statements.
import fs from 'node:fs'
import path from 'node:path'
import sqlite3 from 'sqlite3'
import { DatabaseBusyError } from '../errors.js'
import type { Database, Queryable, RunResult, SqlValue } from './Database.js'

class FifoLock {
  private tail: Promise<void> = Promise.resolve()
  async hold<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.tail
    let release!: () => void
    this.tail = new Promise<void>((r) => (release = r))
    await prev
    try {
      return await fn()
    } finally {
      release()
    }
  }
}

function mapError(e: unknown): unknown {
  const code = (e as { code?: string })?.code
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return new DatabaseBusyError(e)
  return e
}

export class SqliteDatabase implements Database {
  readonly dialect = 'sqlite' as const
  private readonly lock = new FifoLock()
  private readonly raw: Queryable

  private constructor(private readonly db: sqlite3.Database) {
    this.raw = {
      run: (sql, params = []) =>
        new Promise<RunResult>((resolve, reject) => {
          db.run(sql, params as SqlValue[], function (this: sqlite3.RunResult, err: Error | null) {
            if (err) reject(mapError(err))
            else resolve({ changes: this.changes })
          })
        }),
      get: <T>(sql: string, params: readonly SqlValue[] = []) =>
        new Promise<T | undefined>((resolve, reject) => {
          db.get(sql, params as SqlValue[], (err: Error | null, row: T) => (err ? reject(mapError(err)) : resolve(row)))
        }),
      all: <T>(sql: string, params: readonly SqlValue[] = []) =>
        new Promise<T[]>((resolve, reject) => {
          db.all(sql, params as SqlValue[], (err: Error | null, rows: T[]) => (err ? reject(mapError(err)) : resolve(rows)))
        }),
    }
  }

  static async open(file: string, busyTimeoutMs: number): Promise<SqliteDatabase> {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true })
    const db = await new Promise<sqlite3.Database>((resolve, reject) => {
      const d = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(d)))
    })
    db.configure('busyTimeout', busyTimeoutMs)
    const sdb = new SqliteDatabase(db)
    await sdb.raw.get('PRAGMA journal_mode = WAL')
    await sdb.raw.run('PRAGMA foreign_keys = ON')
    await sdb.raw.run('PRAGMA synchronous = NORMAL')
    return sdb
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult> {
    return this.lock.hold(() => this.raw.run(sql, params))
  }
  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined> {
    return this.lock.hold(() => this.raw.get<T>(sql, params))
  }
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]> {
    return this.lock.hold(() => this.raw.all<T>(sql, params))
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.lock.hold(async () => {
      // IMMEDIATE takes the write lock up front, so a busy database fails here, before any work.
      await this.raw.run('BEGIN IMMEDIATE')
      try {
        const out = await fn(this.raw)
        await this.raw.run('COMMIT')
        return out
      } catch (e) {
        await this.raw.run('ROLLBACK').catch(() => undefined)
        throw e
      }
    })
  }

  close(): Promise<void> {
    return this.lock.hold(() => new Promise<void>((resolve, reject) => this.db.close((err) => (err ? reject(err) : resolve()))))
  }
}
