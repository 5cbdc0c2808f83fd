// Workspaces (one tenant each) and their account record.
// require() — what authentication and most routes read — keeps a row for
// WORKSPACE_TTL_MS; a CredentialChange naming the workspace drops it at once.
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { notFound, validation } from '../../platform/errors.js'
import { SharedLookups } from '../../platform/sharedLookups.js'
import { REGIONS, type Region } from '../../platform/secrets.js'
import type { Principal } from '../../platform/http/Principal.js'
import { WorkspaceRepository, type WorkspaceRecord } from './WorkspaceRepository.js'
import { LocalCredentialChanges, type CredentialChanges } from '../access/index.js'

/** How long require() serves a workspace row from memory. */
export const WORKSPACE_TTL_MS = 5_000
const WORKSPACE_CACHE_MAX = 10_000

/** A workspace row with its region narrowed to the regions there are. */
export type WorkspaceRow = Omit<WorkspaceRecord, 'region'> & { region: Region }

export class WorkspaceService {
  private readonly rows = new Map<string, { row: Readonly<WorkspaceRow>; until: number }>()
  /** Bumped by every change: a read that began before one does not fill the cache. */
  private generation = 0
  /** Reads running, by workspace id, with the generation they began in. */
  private readonly reading = new SharedLookups<Readonly<WorkspaceRow>>()
  private readonly repo: WorkspaceRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly defaultRateLimit: number,
    private readonly changes: CredentialChanges = new LocalCredentialChanges(),
    /** Screens counting toward the bill: the registered screens (the screens module counts them). */
    private readonly billableScreens: (workspaceId: string) => Promise<number> = async () => {
      throw new Error('this WorkspaceService was built without a count of billable screens')
    },
  ) {
    this.repo = new WorkspaceRepository(db.kysely)
    changes.subscribe((c) => {
      if (c.kind !== 'workspace') return
      this.generation++
      this.rows.delete(c.id)
    })
  }

  /** Announces that a workspace row changed (every instance drops its cached copy). */
  changed(id: string): void {
    this.changes.publish({ kind: 'workspace', id })
  }

  async create(name: string, region: string = 'us'): Promise<WorkspaceRow> {
    if (!name.trim()) throw validation('workspace name must not be empty.')
    if (!(REGIONS as readonly string[]).includes(region)) throw validation(`region must be one of ${REGIONS.join(', ')}.`)
    const id = this.ids.next('workspace')
    await this.repo.insert({ id, name: name.trim().slice(0, 120), region, created_at: this.clock.now().toISOString() })
    return (await this.get(id))!
  }

  get(id: string): Promise<WorkspaceRow | undefined> {
    return this.repo.byId(id) as Promise<WorkspaceRow | undefined>
  }

  /** The row require() would answer from memory, without waiting; undefined when it would read the database. */
  cached(id: string): Readonly<WorkspaceRow> | undefined {
    const hit = this.rows.get(id)
    return hit && this.clock.now().getTime() < hit.until ? hit.row : undefined
  }

  /** The workspace row (read-only, possibly up to WORKSPACE_TTL_MS old unless a change was announced). */
  require(id: string): Promise<Readonly<WorkspaceRow>> {
    const cached = this.cached(id)
    if (cached) return Promise.resolve(cached)
    // Concurrent requests of a workspace whose row ran out share one read, within one
    // generation: one that asks after a change was announced reads again.
    const gen = this.generation
    return this.reading.run(id, gen, () => this.read(id, gen))
  }

  private async read(id: string, gen: number): Promise<Readonly<WorkspaceRow>> {
    const t = this.clock.now().getTime()
    const w = await this.get(id)
    if (!w) throw notFound('No such workspace.')
    const row = Object.freeze(w)
    if (gen === this.generation) {
      this.rows.delete(id)
      if (this.rows.size >= WORKSPACE_CACHE_MAX) this.rows.delete(this.rows.keys().next().value!)
      this.rows.set(id, { row, until: t + WORKSPACE_TTL_MS })
    }
    return row
  }

  rateLimitOf(w: WorkspaceRow): number {
    return w.rate_limit ?? this.defaultRateLimit
  }

  /** Workspaces there are (the first run's guide checks for none). */
  count(): Promise<number> {
    return this.repo.count()
  }

  /** The Account object: every field of the account is present. */
  async account(p: Principal, user: { email: string | null; emailVerifiedAt: string | null }): Promise<Record<string, unknown>> {
    const w = await this.require(p.workspaceId)
    const billing = JSON.parse(w.billing || '{}') as Record<string, unknown>
    const selfInvoiced = (billing.provider ?? 'svc') === 'svc'
    return {
      id: w.id,
      status: w.status,
      whiteLabel: billing.whiteLabel === true,
      region: w.region,
      billingProvider: billing.provider ?? 'svc',
      payment: selfInvoiced
        ? {
            option: billing.paymentOption ?? 'invoice',
            card: null,
            lastPaid: null,
            cardAvailable: false,
          }
        : null,
      contract: billing.contract ?? null,
      billingBanner: billing.banner ?? null,
      prefs: billing.prefs ?? { timezone: 'UTC', locale: 'en' },
      scheduledScreenPool: null,
      pauseUntil: null,
      cancelEffectiveAt: null,
      deletionRequestedAt: null,
      trialEndsAt: null,
      nextBillingAt: null,
      currentTermEndsAt: null,
      verificationEmailLastSentAt: null,
      cancelReason: null,
      everPaid: billing.everPaid === true,
      survey: null,
      subscriptionStatus: billing.subscriptionStatus ?? null,
      cadence: billing.cadence ?? null,
      billableScreens: await this.billableScreens(w.id),
      licensedScreens: w.licensed_screens,
      emailVerifiedAt: user.emailVerifiedAt,
      email: user.email,
    }
  }
}
