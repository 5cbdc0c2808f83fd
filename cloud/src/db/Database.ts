// The database seam. Services speak this interface with portable SQL (`?` placeholders,
// TEXT timestamps, INTEGER booleans); SqliteDatabase is the default, and a PostgreSQL
// implementation only has to translate placeholders and run the same migrations.

export type SqlValue = string | number | null | bigint | Buffer
export type Row = Record<string, unknown>

export interface RunResult {
  changes: number
}

export interface Queryable {
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult>
  get<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>
  all<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T[]>
}

export interface Database extends Queryable {
  readonly dialect: 'sqlite' | 'postgres'
  /** Runs `fn` inside one transaction; statements of others wait until it ends. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** True for a unique-constraint violation, whatever the dialect. */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string }
  return err?.code === 'SQLITE_CONSTRAINT' && /UNIQUE|PRIMARY KEY/.test(err.message ?? '') || err?.code === '23505'
}
