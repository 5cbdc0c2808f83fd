// Work that runs once per cloud. Every instance runs the same interval workers; before a
// scheduled run each asks for the worker's lease, and only the holder runs. The lease
// lasts a few intervals, is renewed by every run, and is released on a clean stop, so
// when the holder dies another instance takes the work over once the lease lapses.
// Kept in the database, so it holds with or without Redis.
import { randomBytes } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { WorkLeaseRepository } from './WorkLeaseRepository.js'

/** A lease is taken for this many intervals (at least MIN_LEASE_MS). */
const LEASE_INTERVALS = 3
const MIN_LEASE_MS = 30_000

export class WorkLeases {
  /** This process's name in `work_leases.holder`. */
  readonly holder: string

  constructor(
    private readonly repo: WorkLeaseRepository,
    private readonly clock: Clock,
    holder?: string,
  ) {
    this.holder = holder ?? `inst_${randomBytes(8).toString('hex')}`
  }

  /** Whether this instance runs `name` now (taking or renewing its lease). */
  async hold(name: string, intervalMs: number): Promise<boolean> {
    const now = this.clock.now().getTime()
    const ttl = Math.max(MIN_LEASE_MS, intervalMs * LEASE_INTERVALS)
    return this.repo.hold(name, this.holder, new Date(now).toISOString(), new Date(now + ttl).toISOString())
  }

  release(name: string): Promise<void> {
    return this.repo.release(name, this.holder)
  }

  holderOf(name: string): Promise<string | undefined> {
    return this.repo.holderOf(name, this.clock.now().toISOString())
  }
}
