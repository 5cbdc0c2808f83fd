// PostgreSQL through `pg` 8 and Kysely's PostgresDialect, chosen by SVC_DATABASE_URL.
// Numbers come back as numbers: int8 (COUNT, SUM, BIGINT columns) and numeric are parsed
// here for this pool only, so no caller ever sees a numeric string. A statement waiting
// on a lock longer than the busy timeout fails with DatabaseBusyError (503), as on SQLite.
import pg from 'pg'
import { Kysely, PostgresDialect, sql, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely'
import { DatabaseBusyError, validation } from '../errors.js'
import { KyselyDatabase } from './Database.js'
import type { DB } from './schema.js'

const INT8 = 20
const NUMERIC = 1700

function typeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (oid === INT8 || oid === NUMERIC) return (v: string) => (v === null ? null : Number(v))
  return pg.types.getTypeParser(oid, format as 'text')
}

const NUL_MESSAGE = 'Text must not contain the NUL character (U+0000).'

export function mapPostgresError(e: unknown): unknown {
  const code = (e as { code?: string })?.code
  // character_not_in_repertoire / untranslatable_character: a NUL that reached a statement.
  if (code === '22021' || code === '22P05') return validation(NUL_MESSAGE)
  // lock_not_available (lock_timeout), query_canceled by statement timeout, serialization/deadlock.
  if (code === '55P03' || code === '57014' || code === '40001' || code === '40P01') return new DatabaseBusyError(e)
  return e
}

/** Prepared statements kept per connection; statements past this many run unnamed. */
const PREPARED_PER_CONNECTION = 256
const READ = /^\s*(select|with)\b/i

/**
 * A pool client that runs each parameterised read under a statement name of its own, so
 * PostgreSQL parses and plans it once per connection instead of on every call (the hot
 * reads, such as the screen list, spent as long being planned as being run). Writes,
 * statements without parameters (transaction control, DDL, several statements in one text)
 * and statements past PREPARED_PER_CONNECTION go as before. A statement whose tables
 * changed shape after it was prepared (`cached plan must not change result type`) runs
 * again unnamed and is not named again on this connection.
 */
class PreparingClient extends pg.Client {
  private readonly names = new Map<string, string | null>()

  // biome-ignore lint/suspicious/noExplicitAny: pg.Client's query has many overloads; only (text, values) is changed.
  override query(...args: any[]): any {
    const [text, values, callback] = args
    if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || callback !== undefined || !READ.test(text)) {
      return (super.query as (...a: unknown[]) => unknown)(...args)
    }
    let name = this.names.get(text)
    if (name === undefined) {
      name = this.names.size < PREPARED_PER_CONNECTION ? `svc_${this.names.size}` : null
      this.names.set(text, name)
    }
    if (name === null) return super.query(text, values)
    return super.query({ name, text, values }).catch((e: unknown) => {
      if ((e as { code?: string })?.code !== '0A000') throw e
      this.names.set(text, null)
      return super.query(text, values)
    })
  }
}

class MappedConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}
  async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    // PostgreSQL text cannot hold NUL (SQLite's can). A read compares it as U+FFFF, a
    // noncharacter no stored text holds, so it matches nothing, as on SQLite (an aggregate
    // still answers its row); a write holding one is refused as bad input. Sent on, either
    // would fail the statement and abort its transaction.
    if (q.parameters.some((p) => typeof p === 'string' && p.includes('\u0000'))) {
      if (!/^\s*(select|with)\b/i.test(q.sql)) throw validation(NUL_MESSAGE)
      const parameters = q.parameters.map((p) => (typeof p === 'string' ? p.replaceAll('\u0000', '\uffff') : p))
      q = { ...q, parameters }
    }
    try {
      return await this.inner.executeQuery<R>(q)
    } catch (e) {
      throw mapPostgresError(e)
    }
  }
  streamQuery<R>(q: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(q, chunkSize)
  }
}

/** Wraps the PostgreSQL driver so its errors are mapped like SQLite's. */
class MappedDriver implements Driver {
  private readonly wrapped = new WeakMap<DatabaseConnection, MappedConnection>()
  constructor(private readonly inner: Driver) {}
  init() {
    return this.inner.init()
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    const c = await this.inner.acquireConnection()
    let m = this.wrapped.get(c)
    if (!m) this.wrapped.set(c, (m = new MappedConnection(c)))
    return m
  }
  private unwrap(c: DatabaseConnection): DatabaseConnection {
    return (c as MappedConnection).inner ?? c
  }
  async beginTransaction(c: DatabaseConnection, s: TransactionSettings) {
    try {
      await this.inner.beginTransaction(this.unwrap(c), s)
    } catch (e) {
      throw mapPostgresError(e)
    }
  }
  async commitTransaction(c: DatabaseConnection) {
    try {
      await this.inner.commitTransaction(this.unwrap(c))
    } catch (e) {
      throw mapPostgresError(e)
    }
  }
  rollbackTransaction(c: DatabaseConnection) {
    return this.inner.rollbackTransaction(this.unwrap(c))
  }
  releaseConnection(c: DatabaseConnection) {
    return this.inner.releaseConnection(this.unwrap(c))
  }
  destroy() {
    return this.inner.destroy()
  }
}

class MappedPostgresDialect extends PostgresDialect {
  override createDriver(): Driver {
    return new MappedDriver(super.createDriver())
  }
}

export interface PostgresOptions {
  /** Lock wait before DatabaseBusyError, ms. */
  busyTimeoutMs: number
  /** Schema to work in (tests give each test its own); default: the role's search_path. */
  schema?: string
  /** Pool size (default 10). */
  max?: number
}

export class PostgresDatabase extends KyselyDatabase {
  declare readonly dialect: 'postgres'
  static async open(url: string, opts: PostgresOptions): Promise<PostgresDatabase> {
    const { connectionString, options } = splitOptions(url)
    const settings = [...(options ? [options] : []), `-c lock_timeout=${opts.busyTimeoutMs}`]
    if (opts.schema) settings.push(`-c search_path=${opts.schema}`)
    const pool = new pg.Pool({
      connectionString,
      max: opts.max ?? 10,
      Client: PreparingClient,
      options: settings.join(' '),
      types: { getTypeParser: typeParser as typeof pg.types.getTypeParser },
    })
    const db = new PostgresDatabase('postgres', new Kysely<DB>({ dialect: new MappedPostgresDialect({ pool }) }))
    try {
      await sql`SELECT 1`.execute(db.kysely)
    } catch (e) {
      await db.close().catch(() => undefined)
      throw e
    }
    return db
  }
}

/**
 * The URL's `options` parameter (server settings for each session, as libpq takes them:
 * `?options=-c%20synchronous_commit%3Doff`) apart from the rest: pg would let it replace the
 * settings given beside the URL (the lock timeout, the schema), so they are joined instead.
 */
export function splitOptions(url: string): { connectionString: string; options: string | null } {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return { connectionString: url, options: null }
  }
  const options = u.searchParams.get('options')
  if (options === null) return { connectionString: url, options: null }
  u.searchParams.delete('options')
  return { connectionString: u.toString(), options }
}
