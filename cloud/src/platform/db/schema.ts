// The database's type (`DB`): the platform's own tables here, each domain's in its
// `tables.ts` (merged into `DB`), as the migrations under ./migrations leave them. Every
// repository's queries are checked against these. Conventions (docs/decisions.md):
// ids and timestamps are TEXT (ISO-8601 UTC with milliseconds, so text order is time
// order on both engines), booleans are INTEGER 0/1, JSON is TEXT parsed in the repository.
import type { ColumnType, Kysely, Selectable, Transaction } from 'kysely'

/** A column with a DEFAULT in the DDL: optional on insert. */
export type Defaulted<T> = ColumnType<T, T | undefined, T>

export interface IdempotencyKeysTable {
  workspace_id: string
  /** The credential that sent the key (`apikey:<id>` or a user id): keys are scoped per credential. */
  credential: string
  route: string
  idem_key: string
  fingerprint: string
  state: string
  status_code: number | null
  body: string | null
  created_at: string
}

export interface SchemaMigrationsTable {
  version: number
  name: string
  applied_at: string
}

export interface WorkLeasesTable {
  /** The worker's name, e.g. `status`. */
  name: string
  /** The instance that runs it (a random id per process). */
  holder: string
  expires_at: string
}

/**
 * The database's tables. The platform's own are here; each domain adds its tables' types
 * from its `tables.ts` (declaration merging), so this interface is the whole schema.
 */
export interface DB {
  work_leases: WorkLeasesTable
  idempotency_keys: IdempotencyKeysTable
  schema_migrations: SchemaMigrationsTable
}

/** A connection or an open transaction: what a repository runs its statements on. */
export type Executor = Kysely<DB> | Transaction<DB>

/** A table's selected row with some columns narrowed (a TEXT column holding one of an enumeration's values, say). */
export type RowWith<T, N extends { [K in keyof Selectable<T>]?: unknown }> = Omit<Selectable<T>, keyof N> & N
