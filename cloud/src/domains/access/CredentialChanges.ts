// The seam through which a change to a credential or a workspace reaches every cache of
// it. Authentication keeps a credential's principal (and the workspace row) for a few
// seconds; a revoke, rotate, delete or permission change publishes here and each cache
// drops what it holds before the call that made the change answers. In one process the
// publication is a direct, synchronous call (LocalCredentialChanges); a cluster passes
// an implementation that also broadcasts to the other instances and delivers what they
// publish to its own subscribers.

export type CredentialChange =
  /** These keys (and every key created under them) changed: revoked, rotated, deleted or re-granted. */
  | { kind: 'apiKey'; ids: string[] }
  /** This workspace's row changed (status, rate limit, name…). */
  | { kind: 'workspace'; id: string }
  /**
   * These users were removed or their role changed: their sessions' principals are stale.
   * `reactivated`: they were activated again (SCIM), so credentials refused a moment ago may be good again.
   */
  | { kind: 'user'; ids: string[]; reactivated?: true }

export interface CredentialChanges {
  /** Delivers `change` to every subscriber before it returns. */
  publish(change: CredentialChange): void
  /** Returns the function that unsubscribes. */
  subscribe(listener: (change: CredentialChange) => void): () => void
}

export class LocalCredentialChanges implements CredentialChanges {
  private readonly listeners = new Set<(change: CredentialChange) => void>()

  publish(change: CredentialChange): void {
    for (const l of this.listeners) l(change)
  }

  subscribe(listener: (change: CredentialChange) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}
