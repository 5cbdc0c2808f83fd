// Where the broker keeps sessions, queued QoS 1 messages, retained messages and wills: in
// memory (aedes' own persistence), lost when the process ends. The database is the only
// durable store: what a screen should show (its desired state) and the serial jobs it
// still has to run live there, and after a restart DeviceSessions.ts rebuilds what a
// device needs from it (its subscriptions, its latest desired state, its open jobs).
// A clustered deployment swaps this factory for a shared persistence (redis, mongodb).

/** The aedes 1.x async persistence interface (untyped upstream); destroy() releases storage. */
export interface BrokerPersistence {
  setup(broker: unknown): Promise<void>
  destroy?(): Promise<void>
}

/** Makes the persistence when the broker starts; undefined = aedes' default (memory). */
export type PersistenceFactory = () => Promise<BrokerPersistence | undefined>

/** aedes' own in-memory persistence: everything is lost when the process ends. */
export const memoryPersistence: PersistenceFactory = async () => undefined
