// Writes announced once they are committed, for what keeps copies of the data in memory
// (today the screen list's kept pages, domains/screens/ScreenListCache.ts). A repository that
// writes such data calls `announce(k, change)` with the executor it wrote through. Outside
// a transaction the statement has committed when it returns, so the change goes out at
// once; inside one (Database.transaction) it waits for COMMIT and is dropped on rollback.
// A reader that began before the change must therefore not keep what it read: see the
// epoch in ScreenListCache.
import type { Executor } from './schema.js'

export type DataChange =
  /** The set of a workspace's screens changed (added, removed, moved, reassigned): every kept page of it is stale. */
  | { kind: 'workspaceScreens'; workspaceId: string }
  /** Listed fields of these screens changed (status, last seen): the kept pages holding them are stale. */
  | { kind: 'screens'; screenIds: readonly string[] }

/** Where committed changes are heard: the database's feed, or on several instances all of theirs (platform/cluster/RedisDataChanges.ts). */
export interface DataChanges {
  /** Returns the function that unsubscribes. */
  subscribe(listener: (change: DataChange) => void): () => void
}

export class ChangeFeed implements DataChanges {
  private readonly listeners = new Set<(change: DataChange) => void>()

  /** Returns the function that unsubscribes. */
  subscribe(listener: (change: DataChange) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  emit(change: DataChange): void {
    for (const l of this.listeners) l(change)
  }
}

interface Binding {
  feed: ChangeFeed
  /** Changes of an open transaction, emitted after its COMMIT; null outside a transaction. */
  pending: DataChange[] | null
}

const bindings = new WeakMap<Executor, Binding>()

/** Ties a database's own Kysely handle to its feed (KyselyDatabase does this). */
export function bindFeed(k: Executor, feed: ChangeFeed): void {
  bindings.set(k, { feed, pending: null })
}

/**
 * Ties an open transaction's handle to the feed: what is announced through `trx` is held
 * until the caller reports the COMMIT by calling `committed` (never called on a rollback).
 */
export function bindTransaction(trx: Executor, feed: ChangeFeed): { committed(): void } {
  const binding: Binding = { feed, pending: [] }
  bindings.set(trx, binding)
  return {
    committed() {
      const changes = binding.pending ?? []
      binding.pending = null
      for (const c of changes) feed.emit(c)
    },
  }
}

/** Announces `change`, written through `k`: now, or after the COMMIT of `k`'s transaction. */
export function announce(k: Executor, change: DataChange): void {
  const b = bindings.get(k)
  if (!b) return
  if (b.pending) b.pending.push(change)
  else b.feed.emit(change)
}
