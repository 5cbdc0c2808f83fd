// Webhook endpoints: where a workspace's events go (a public https URL, checked against
// private addresses), which events, and the signing secret shown once at creation.
import type { Clock, IdGenerator, RandomSource } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { ApiError, notFound } from '../../platform/errors.js'
import type { EventName } from '../events/index.js'
import { isUnsafeUrlError, type OutboundGuard } from '../../platform/net/OutboundGuard.js'
import type { Principal } from '../../platform/http/Principal.js'
import { isEventName } from './catalog.js'
import { newSigningSecret } from './signing.js'
import { WebhookRepository } from './WebhookRepository.js'

import { badRequest, cutDescription, endpointView, type EndpointRow, type EndpointView } from './model.js'

export class WebhookEndpoints {
  private readonly repo: WebhookRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly outbound: OutboundGuard,
    private readonly random?: RandomSource,
  ) {
    this.repo = new WebhookRepository(db.kysely, db.dialect)
  }

  private checkUrl(raw: string): string {
    try {
      return this.outbound.check(raw.trim()).toString()
    } catch (e) {
      if (isUnsafeUrlError(e)) throw new ApiError('unsafe_url', `url is not a public https address: ${(e as Error).message}.`)
      throw e
    }
  }

  private checkEvents(events: string[]): EventName[] {
    const unknown = events.filter((e) => !isEventName(e))
    if (unknown.length) throw badRequest(`Unknown event ${JSON.stringify(unknown[0])}; see GET /v1/webhooks/events.`)
    return [...new Set(events)] as EventName[]
  }

  /** The endpoint's row; 404 when the workspace has none of that id. */
  async row(p: Principal, id: string): Promise<EndpointRow> {
    const r = (await this.repo.endpoint(p.workspaceId, id)) as EndpointRow | undefined
    if (!r) throw notFound('No such webhook endpoint.')
    return r
  }

  async list(p: Principal): Promise<EndpointView[]> {
    return ((await this.repo.endpoints(p.workspaceId)) as EndpointRow[]).map(endpointView)
  }

  async get(p: Principal, id: string): Promise<EndpointView> {
    return endpointView(await this.row(p, id))
  }

  async create(p: Principal, input: { url: string; events?: string[]; description?: string | null }): Promise<EndpointView & { secret: string }> {
    const url = this.checkUrl(input.url)
    const events = this.checkEvents(input.events ?? [])
    const secret = newSigningSecret(this.random)
    const id = this.ids.next('webhookEndpoint')
    const now = this.clock.now().toISOString()
    await this.repo.insertEndpoint({
      id,
      workspace_id: p.workspaceId,
      url,
      description: cutDescription(input.description),
      secret,
      events: JSON.stringify(events),
      enabled: 1,
      auto_disabled_at: null,
      auto_disabled_reason: null,
      consecutive_failures: 0,
      last_delivery_at: null,
      last_status: null,
      created_at: now,
      updated_at: now,
    })
    return { ...(await this.get(p, id)), secret }
  }

  async update(p: Principal, id: string, input: { url?: string; events?: string[]; description?: string | null; enabled?: boolean }): Promise<EndpointView> {
    const cur = await this.row(p, id)
    const url = input.url !== undefined ? this.checkUrl(input.url) : cur.url
    const events = input.events !== undefined ? JSON.stringify(this.checkEvents(input.events)) : cur.events
    const description = input.description !== undefined ? cutDescription(input.description) : cur.description
    let { enabled, auto_disabled_at, auto_disabled_reason, consecutive_failures } = cur
    if (input.enabled === true) {
      // Switching on clears an automatic switch-off and starts the failure count again.
      enabled = 1
      auto_disabled_at = null
      auto_disabled_reason = null
      consecutive_failures = 0
    } else if (input.enabled === false) {
      enabled = 0
    }
    await this.repo.updateEndpoint(p.workspaceId, id, {
      url,
      events,
      description,
      enabled,
      auto_disabled_at,
      auto_disabled_reason,
      consecutive_failures,
      updated_at: this.clock.now().toISOString(),
    })
    return this.get(p, id)
  }

  async remove(p: Principal, id: string): Promise<{ id: string }> {
    await this.row(p, id)
    // Pending work for a deleted endpoint is dropped, not retried; the log keeps it.
    await this.db.transaction((tx) => this.repo.deleteEndpoint(p.workspaceId, id, tx.kysely))
    return { id }
  }
}
