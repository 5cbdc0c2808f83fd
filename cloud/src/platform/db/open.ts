// Opens the database the configuration names: PostgreSQL when SVC_DATABASE_URL is set,
// otherwise the SQLite file under SVC_DATA_DIR. The PostgreSQL layer (and `pg`) loads only
// when it is the one named.
import type { Config } from '../../config.js'
import type { Database } from './Database.js'
import { SqliteDatabase } from './SqliteDatabase.js'

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dbFile' | 'dbBusyTimeoutMs'>): Promise<Database> {
  if (config.databaseUrl) return (await import('./PostgresDatabase.js')).PostgresDatabase.open(config.databaseUrl, { busyTimeoutMs: config.dbBusyTimeoutMs })
  return SqliteDatabase.open(config.dbFile, config.dbBusyTimeoutMs)
}
