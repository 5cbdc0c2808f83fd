// Workspaces (one tenant each) and their account record (SPEC "Account").
import type { Clock, IdGenerator } from '../clock.js'
import type { Database } from '../db/Database.js'
import { notFound, validation } from '../errors.js'
import { REGIONS, type Region } from '../auth/secrets.js'
import type { Principal } from '../auth/Principal.js'

export interface WorkspaceRow {
  id: string
  name: string
  region: Region
  status: string
  rate_limit: number | null
  licensed_screens: number | null
  billing: string
  created_at: string
}

export class WorkspaceService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly defaultRateLimit: number,
  ) {}

  async create(name: string, region: string = 'us'): Promise<WorkspaceRow> {
    if (!name.trim()) throw validation('workspace name must not be empty.')
    if (!(REGIONS as readonly string[]).includes(region)) throw validation(`region must be one of ${REGIONS.join(', ')}.`)
    const id = this.ids.next('workspace')
    await this.db.run('INSERT INTO workspaces (id, name, region, status, created_at) VALUES (?, ?, ?, ?, ?)', [
      id,
      name.trim().slice(0, 120),
      region,
      'active',
      this.clock.now().toISOString(),
    ])
    return (await this.get(id))!
  }

  get(id: string): Promise<WorkspaceRow | undefined> {
    return this.db.get<WorkspaceRow>('SELECT * FROM workspaces WHERE id = ?', [id])
  }

  async require(id: string): Promise<WorkspaceRow> {
    const w = await this.get(id)
    if (!w) throw notFound('No such workspace.')
    return w
  }

  rateLimitOf(w: WorkspaceRow): number {
    return w.rate_limit ?? this.defaultRateLimit
  }

  /** Screens counting toward the bill: registered screens once the screens table exists. */
  private async billableScreens(workspaceId: string): Promise<number> {
    try {
      const r = await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM screens WHERE workspace_id = ?', [workspaceId])
      return r?.n ?? 0
    } catch {
      return 0
    }
  }

  /** The Account object: every field of SPEC "Account" is present. */
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
