// Where the broker keeps sessions, queued QoS 1 messages, retained messages and wills.
// On disk (aedes-persistence-level on a LevelDB folder, default <dataDir>/broker) they
// survive a cloud restart, so an offline screen's queued jobs and every screen's retained
// desired state are still there; in memory for tests (dbFile ':memory:'). A clustered
// deployment swaps this factory for a shared persistence (redis, mongodb).
import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** The aedes 1.x async persistence interface (untyped upstream); destroy() releases storage. */
export interface BrokerPersistence {
  setup(broker: unknown): Promise<void>
  destroy?(): Promise<void>
}

/** Makes the persistence when the broker starts; undefined = aedes' default (memory). */
export type PersistenceFactory = () => Promise<BrokerPersistence | undefined>

/** aedes' own in-memory persistence: everything is lost when the process ends. */
export const memoryPersistence: PersistenceFactory = async () => undefined

/** LevelDB in `dir` (created if missing); a second process on the same folder fails to open it. */
export function levelPersistence(dir: string): PersistenceFactory {
  return async () => {
    mkdirSync(dir, { recursive: true })
    const { Level } = require('level') as { Level: new (location: string) => { open(): Promise<void> } }
    const AsyncLevelPersistence = require('aedes-persistence-level/asyncPersistence.js') as new (db: unknown) => BrokerPersistence
    const db = new Level(dir)
    await db.open()
    return new AsyncLevelPersistence(db)
  }
}
