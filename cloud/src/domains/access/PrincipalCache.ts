// Authentication runs on every request, so the principal behind a presented credential
// (API key, session token, OAuth access token) is kept for PRINCIPAL_TTL_MS, keyed by the
// SHA-256 of the credential. Each entry carries tags naming what it depends on
// (`apikey:<id>` for the key and every key above it on its creator chain, `user:<id>`)
// and the earliest expiry along them, checked on every hit. A CredentialChange naming a
// tag drops every entry carrying it before the call that made the change answers, so a
// revoked key, a deleted user or a changed role is refused on the very next request.
import type { Clock } from '../../platform/clock.js'
import { SharedLookups } from '../../platform/sharedLookups.js'
import type { CredentialChanges } from './CredentialChanges.js'
import type { Principal } from '../../platform/http/Principal.js'

/** How long a presented credential's principal is kept without asking the database again. */
export const PRINCIPAL_TTL_MS = 5_000
/** Bound on cached principals; the oldest entry goes first. */
const PRINCIPAL_CACHE_MAX = 10_000

export interface CachedPrincipal {
  principal: Principal
  /** What the principal depends on: `apikey:<id>`, `user:<id>`. */
  tags: string[]
  /** Earliest expiry of the credential and what it depends on (ms; Infinity when none). */
  expiresAt: number
  /** Kept until then (ms, clock time). */
  until: number
}

export const keyTag = (id: string) => `apikey:${id}`
export const userTag = (id: string) => `user:${id}`

export function freezePrincipal(p: Principal): Principal {
  Object.freeze(p.actor)
  if (Array.isArray(p.grant)) Object.freeze(p.grant)
  return Object.freeze(p)
}

export class PrincipalCache {
  private readonly entries = new Map<string, CachedPrincipal>()
  /** Bumped by every change: a lookup that began before one does not fill the cache. */
  private generation = 0
  /** Lookups running, by key, with the generation they began in. */
  private readonly running = new SharedLookups<Principal | null>()

  constructor(
    private readonly clock: Clock,
    changes: CredentialChanges,
    private readonly ttlMs = PRINCIPAL_TTL_MS,
    private readonly max = PRINCIPAL_CACHE_MAX,
  ) {
    changes.subscribe((c) => {
      if (c.kind === 'apiKey') this.forget(c.ids.map(keyTag))
      else if (c.kind === 'user') this.forget(c.ids.map(userTag))
    })
  }

  /** The live entry under `key` (`<kind>:<hash>`), dropping it when its time is up. */
  get(key: string): CachedPrincipal | undefined {
    const hit = this.entries.get(key)
    if (!hit) return undefined
    const t = this.clock.now().getTime()
    if (t < hit.until && t < hit.expiresAt) return hit
    this.entries.delete(key)
    return undefined
  }

  /**
   * One database lookup of `key` for every caller that asks while it runs: when an entry
   * runs out under many concurrent requests of one credential, they wait for the same
   * lookup instead of making one each. Shared only within a generation: a caller that
   * asks after a change was published (a revoke) makes a lookup of its own, so the
   * change holds from the next request on. `lookup` gets the generation to `set` with.
   */
  shared(key: string, lookup: (generation: number) => Promise<Principal | null>): Promise<Principal | null> {
    const generation = this.generation
    return this.running.run(key, generation, () => lookup(generation))
  }

  /** Stores a looked-up principal unless a change was published since its lookup began (`shared`). */
  set(generation: number, key: string, principal: Principal, tags: string[], expiresAt: number): void {
    if (generation !== this.generation) return
    this.entries.delete(key)
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(key, { principal, tags, expiresAt, until: this.clock.now().getTime() + this.ttlMs })
  }

  /** Drops every entry carrying one of `tags`. */
  forget(tags: string[]): void {
    this.generation++
    const gone = new Set(tags)
    for (const [k, e] of this.entries) if (e.tags.some((t) => gone.has(t))) this.entries.delete(k)
  }

  get size(): number {
    return this.entries.size
  }
}
