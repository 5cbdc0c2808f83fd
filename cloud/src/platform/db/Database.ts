// The database seam. Repositories speak Kysely (`db.kysely`, typed by ./schema.ts); code
// not yet moved into a repository still speaks the raw interface below with portable SQL
// (`?` placeholders, translated to `$n` on PostgreSQL). Both run on the same connection
// and, inside `transaction`, the same transaction: `tx.kysely` is that transaction.
import { CompiledQuery, type Kysely } from 'kysely'
import type { DB, Executor } from './schema.js'
import { bindFeed, bindTransaction, ChangeFeed } from './changes.js'

export type SqlValue = string | number | null | bigint | Buffer
export type Row = Record<string, unknown>
export type Dialect = 'sqlite' | 'postgres'

/** A Kysely handle on the database or on one open transaction: what repositories take. */
export type { Executor }

export interface RunResult {
  changes: number
}

export interface Queryable {
  readonly dialect: Dialect
  /** The typed query builder, on the same connection (inside a transaction: that transaction). */
  readonly kysely: Executor
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult>
  get<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>
  all<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T[]>
}

/**
 * Work that rides in other writers' transactions (Database.beforeCommit): called inside each
 * transaction once its own work is done, just before COMMIT, with that transaction. It
 * answers null when it wrote nothing, or how to learn the outcome: `committed` after the
 * COMMIT, `failed` when the transaction was rolled back after it ran. It must not throw (a
 * statement of its own that the database refuses is its business: on SQLite a refused
 * statement is backed out alone and the transaction goes on).
 */
export type CommitRider = (tx: Queryable) => Promise<{ committed(): void; failed(): void } | null>

export interface Database extends Queryable {
  readonly kysely: Kysely<DB>
  /**
   * For reads outside transactions that may run beside the writer: on a SQLite file a
   * second, read-only connection to it (WAL lets it read while the first one writes); on
   * PostgreSQL and in-memory SQLite the same as `kysely`. It sees what has committed.
   */
  readonly reads: Kysely<DB>
  /** Runs `fn` inside one transaction; statements of others wait until it ends. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /**
   * Runs `fn` holding the connection, outside any transaction (on SQLite: the one writer's
   * turn, so whatever was queued before it has run, and nothing lands between its statements).
   */
  exclusive<T>(fn: (q: Queryable) => Promise<T>): Promise<T>
  /** Adds `rider` to every transaction from now on, before its COMMIT (see CommitRider). Returns the function that removes it. */
  beforeCommit(rider: CommitRider): () => void
  /**
   * When a transaction has been asked for and has not ended yet (running, or waiting for
   * the connection): a promise of the end of the next one to end (its riders told of its
   * outcome first). Null when there is none.
   */
  nextTransactionEnd(): Promise<void> | null
  /** Committed writes of data kept in memory elsewhere (./changes.ts). */
  readonly changes: ChangeFeed
  close(): Promise<void>
}

/** True for a unique-constraint violation, whatever the dialect. */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string }
  return (err?.code === 'SQLITE_CONSTRAINT' && /UNIQUE|PRIMARY KEY/.test(err.message ?? '')) || err?.code === '23505'
}

/** `?` placeholders to `$1, $2…`, leaving quoted strings and identifiers alone. */
export function toNumberedPlaceholders(sql: string): string {
  let out = ''
  let n = 0
  let quote: string | null = null
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null
      out += ch
    } else if (ch === "'" || ch === '"') {
      quote = ch
      out += ch
    } else if (ch === '?') {
      out += `$${++n}`
    } else out += ch
  }
  return out
}

function rawQueryable(dialect: Dialect, k: Executor): Queryable {
  const exec = <T>(sql: string, params: readonly SqlValue[] = []) =>
    k.executeQuery<T>(CompiledQuery.raw(dialect === 'postgres' ? toNumberedPlaceholders(sql) : sql, [...params]))
  return {
    dialect,
    kysely: k,
    run: async (sql, params) => ({ changes: Number((await exec(sql, params)).numAffectedRows ?? 0n) }),
    get: async <T>(sql: string, params?: readonly SqlValue[]) => (await exec<T>(sql, params)).rows[0],
    all: async <T>(sql: string, params?: readonly SqlValue[]) => (await exec<T>(sql, params)).rows,
  }
}

/** A Database over any Kysely instance: SqliteDatabase and PostgresDatabase are this with an opener. */
export class KyselyDatabase implements Database {
  private readonly raw: Queryable
  readonly changes = new ChangeFeed()
  constructor(
    readonly dialect: Dialect,
    readonly kysely: Kysely<DB>,
    readonly reads: Kysely<DB> = kysely,
  ) {
    this.raw = rawQueryable(dialect, kysely)
    bindFeed(kysely, this.changes)
  }
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult> {
    return this.raw.run(sql, params)
  }
  get<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined> {
    return this.raw.get<T>(sql, params)
  }
  all<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T[]> {
    return this.raw.all<T>(sql, params)
  }
  private readonly riders = new Set<CommitRider>()
  beforeCommit(rider: CommitRider): () => void {
    this.riders.add(rider)
    return () => this.riders.delete(rider)
  }
  /** Transactions asked for and not ended yet. */
  private inFlight = 0
  private ended: (() => void)[] = []
  nextTransactionEnd(): Promise<void> | null {
    if (this.inFlight === 0) return null
    return new Promise((resolve) => this.ended.push(resolve))
  }
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    this.inFlight++
    try {
      return await this.runTransaction(fn)
    } finally {
      this.inFlight--
      const ended = this.ended
      this.ended = []
      for (const e of ended) e()
    }
  }
  private async runTransaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    let tx: { committed(): void } | undefined
    const rode: { committed(): void; failed(): void }[] = []
    let out: T
    try {
      out = await this.kysely.transaction().execute(async (trx) => {
        tx = bindTransaction(trx, this.changes)
        const q = rawQueryable(this.dialect, trx)
        const result = await fn(q)
        for (const rider of this.riders) {
          const r = await rider(q)
          if (r) rode.push(r)
        }
        return result
      })
    } catch (err) {
      for (const r of rode) r.failed()
      throw err
    }
    // Kysely's execute resolves after COMMIT (and rejects after a ROLLBACK, skipping this).
    tx?.committed()
    for (const r of rode) r.committed()
    return out
  }
  exclusive<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return this.kysely.connection().execute((c) => fn(rawQueryable(this.dialect, c)))
  }
  async close(): Promise<void> {
    if (this.reads !== this.kysely) await this.reads.destroy()
    await this.kysely.destroy()
  }
}
