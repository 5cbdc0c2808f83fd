// Emergencies: content on the target screens above everything,
// until cleared. Statuses: `active`, then `cleared`. Casts on those screens pause
// (refreshCastPause) and resume when it is cleared. Start and clear are announced on the
// event outbox as `emergency.started` / `emergency.cleared`, in the transaction of the change.
// Tables: domains/takeovers/EmergencyRepository.ts.
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { actorRef, type Principal } from '../../platform/http/Principal.js'
import { ApiError, validation } from '../../platform/errors.js'
import type { EventOutbox } from '../events/index.js'
import { EmergencyRepository } from './EmergencyRepository.js'
import type { ReachReceipts, ScreenReachView } from './ReachReceipts.js'
import type { Page, PageRequest } from '../../platform/paging.js'
import type { NodeService } from '../nodes/index.js'
import type { ContentKind, EmergencyAlert } from '@svc/shared/mqtt/index'
import type { Target, Takeover, TakeoverPlan, TargetInput } from './Takeover.js'
import type { TargetFilter } from '../screens/index.js'
import { castsOnScreens, castsOnTarget, refreshCastPause } from './CastService.js'
import type { MarkDirtyLater } from '../screens/index.js'
import { EMERGENCY_STATUSES, Emergency, type EmergencySource, type EmergencyStatus, type EmergencyView, type Presentation } from './takeoverSchemas.js'
import type { RowWith } from '../../platform/db/schema.js'
import type { EmergenciesTable } from './tables.js'

export { EMERGENCY_STATUSES, Emergency, type EmergencySource, type EmergencyStatus, type EmergencyView, type Presentation }

type EmergencyRow = RowWith<EmergenciesTable, { status: EmergencyStatus }>

const view = (r: EmergencyRow): EmergencyView => ({
  id: r.id,
  kind: 'emergency',
  status: r.status,
  contentKind: r.content_kind,
  contentId: r.content_id,
  contentName: r.content_name,
  message: r.message,
  presentation: r.presentation === 'banner' ? 'banner' : 'fullscreen',
  source: r.source_cap_feed_id && r.source_cap_alert_id ? { capFeedId: r.source_cap_feed_id, alertId: r.source_cap_alert_id } : null,
  scopeKind: r.scope_kind,
  scopeNodeId: r.scope_node_id,
  groupId: r.scope_group_id ?? null,
  screenCount: r.screen_count,
  startedAt: r.started_at,
  clearedAt: r.cleared_at,
  screensReleased: r.screens_released,
})

export interface EmergencyInput extends TargetInput {
  /** Absent (with contentId) only for a CAP feed naming no content: the message alone shows. */
  contentKind?: ContentKind | undefined
  contentId?: string | undefined
  contentName?: string | undefined
  message?: string | undefined
  presentation?: Presentation | undefined
  /** Set by a CAP feed; never taken from a request body. */
  source?: EmergencySource | undefined
  /** Set by a CAP feed: the alert's text field by field, for the player's layout. */
  alert?: EmergencyAlert | undefined
}

export class EmergencyService {
  private readonly repo: EmergencyRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly takeover: Takeover,
    private readonly markDirty: MarkDirtyLater,
    private readonly outbox: EventOutbox,
    private readonly reach: ReachReceipts,
  ) {
    this.repo = new EmergencyRepository(db.kysely)
  }

  private async row(p: Principal, id: string): Promise<EmergencyRow> {
    return this.nodes.findReachable<EmergencyRow>(p, 'emergencies', id, 'emergency')
  }

  /** A page of the emergency's screens with how far it got on each (reach receipts). */
  async screens(p: Principal, id: string, page: PageRequest): Promise<Page<ScreenReachView>> {
    const r = await this.row(p, id)
    return this.reach.page('emergency', id, r.started_at, page)
  }

  /** The emergency with its `delivery` counts. */
  async get(p: Principal, id: string): Promise<EmergencyView> {
    const r = await this.row(p, id)
    return this.withDelivery(view(r))
  }

  private async withDelivery(v: EmergencyView): Promise<EmergencyView> {
    return { ...v, delivery: { targeted: v.screenCount, ...(await this.repo.delivery(v.id)) } }
  }

  async list(p: Principal, filter: { status?: string | undefined; limit: number }): Promise<EmergencyView[]> {
    const rows = await this.repo.list(p.workspaceId, await this.nodes.scopeIds(p), { ...(filter.status ? { status: filter.status } : {}), limit: filter.limit })
    return (rows as EmergencyRow[]).map(view)
  }

  /** What `start` would do, checked the same way, writing nothing (the timeline preview). */
  async plan(p: Principal, input: EmergencyInput): Promise<TakeoverPlan> {
    const target = await this.takeover.resolveTarget(p, input)
    const contentName = await this.checkContent(p, input, target)
    return {
      kind: 'emergency',
      contentKind: input.contentKind ?? null,
      contentId: input.contentId ?? null,
      contentName: input.contentName?.trim().slice(0, 200) || contentName?.slice(0, 200) || null,
      expiresAt: null,
      message: input.message?.trim().slice(0, 1000) || null,
      filter: target.filter,
      screenCount: target.screenCount,
    }
  }

  /**
   * Checks the content as a cast's would be; an emergency without content needs a message
   * (the route always asks for content: only a CAP feed starts one without).
   */
  private async checkContent(p: Principal, input: EmergencyInput, target: Target): Promise<string | null | undefined> {
    if (input.contentKind && input.contentId) return this.takeover.checkContent(p.workspaceId, input.contentKind, input.contentId, target)
    if (input.contentKind || input.contentId) throw validation('contentKind and contentId go together.')
    if (!input.message?.trim() && !input.alert) throw validation('An emergency without content needs a message.')
    return null
  }

  async start(p: Principal, input: EmergencyInput): Promise<EmergencyView> {
    const target = await this.takeover.resolveTarget(p, input)
    const contentName = await this.checkContent(p, input, target)
    const id = this.ids.next('emergency')
    const at = this.clock.now().toISOString()
    const row: EmergencyRow = {
      id,
      workspace_id: p.workspaceId,
      node_id: target.scopeNodeId ?? p.nodeId,
      content_kind: input.contentKind ?? null,
      content_id: input.contentId ?? null,
      content_name: input.contentName?.trim().slice(0, 200) || contentName?.slice(0, 200) || null,
      message: input.message?.trim().slice(0, 1000) || null,
      scope_kind: target.scopeKind,
      scope_node_id: target.scopeNodeId,
      scope_group_id: target.groupId,
      status: 'active',
      screen_count: target.screenCount,
      screens_released: null,
      started_at: at,
      cleared_at: null,
      created_by: actorRef(p),
      cleared_by: null,
      reach_at: null,
      presentation: input.presentation ?? 'fullscreen',
      source_cap_feed_id: input.source?.capFeedId ?? null,
      source_cap_alert_id: input.source?.alertId ?? null,
      alert: input.alert ? JSON.stringify(input.alert) : null,
    }
    // Set-based: the screens are selected in SQL (INSERT … SELECT), never read into the request.
    const v = await this.db.transaction(async (tx) => {
      const screens = () => this.takeover.screenIds(p.workspaceId, target, tx.kysely)
      const v = view({ ...row, screen_count: await this.repo.insert(row, screens(), tx.kysely) })
      await refreshCastPause(tx, await castsOnTarget(tx, p.workspaceId, screens()))
      await this.outbox.record(tx, { event: 'emergency.started', workspaceId: p.workspaceId, occurredAt: at, data: { ...v } })
      return v
    })
    // Answered once stored: publishing goes on behind (the publisher reads the emergency's
    // screens after the answer; delivery counts show it arriving). Nothing is published
    // before this answer, so its delivery is 0 / 0 without counting.
    this.markDirty(p.workspaceId, () => this.repo.screenIdsOf(id)).catch(() => undefined) // the publisher logs failures
    // The event is stored with the emergency; it is handed on behind the answer (a failed
    // dispatch is retried by the webhook worker's next run).
    this.outbox.dispatch().catch(() => undefined)
    return { ...v, delivery: { targeted: v.screenCount, published: 0, applied: 0 } }
  }

  /**
   * Brings the workspace's active emergencies aimed at a location, a group or everything up to
   * date with the fleet: a screen that came to match (tagged, moved, paired, upgraded) is
   * taken, one that stopped matching is let go; both are republished. Runs are coalesced per
   * workspace (one at a time, and one more after it when asked meanwhile).
   */
  follow(workspaceId: string): Promise<void> {
    const run = this.following.get(workspaceId)
    if (run) {
      run.again = true
      return run.done
    }
    const state = { again: false, done: Promise.resolve() }
    state.done = (async () => {
      try {
        do {
          state.again = false
          await this.followOnce(workspaceId)
        } while (state.again)
      } finally {
        this.following.delete(workspaceId)
      }
    })()
    this.following.set(workspaceId, state)
    return state.done
  }

  private readonly following = new Map<string, { again: boolean; done: Promise<void> }>()

  private async followOnce(workspaceId: string): Promise<void> {
    const changed = new Set<string>()
    for (const e of await this.repo.following(workspaceId)) {
      // The emergency reaches what its starter reached: its row keeps that home.
      const p: Principal = { actor: { kind: 'key', id: null, name: 'emergency', nodeId: e.node_id }, workspaceId, grant: 'all', nodeId: e.node_id }
      const input: TargetInput =
        e.scope_kind === 'node'
          ? { scopeKind: 'node', scopeNodeId: e.scope_node_id ?? undefined }
          : e.scope_kind === 'group'
            ? { scopeKind: 'group', groupId: e.scope_group_id ?? undefined }
            : { scopeKind: 'all' }
      let filter: TargetFilter
      try {
        filter = await this.takeover.filterOf(p, input)
      } catch {
        continue // the group or the location is gone: the emergency keeps the screens it has
      }
      const { added, removed } = await this.db.transaction(async (tx) => {
        const r = await this.repo.follow(e.id, this.takeover.screenIds(workspaceId, { filter } as Target, tx.kysely), tx.kysely)
        const moved = [...r.added, ...r.removed]
        if (moved.length) await refreshCastPause(tx, await castsOnScreens(tx, moved))
        return r
      })
      for (const id of [...added, ...removed]) changed.add(id)
    }
    if (changed.size) await this.markDirty(workspaceId, [...changed])
  }

  /**
   * Replaces an active emergency's message (and presentation): a CAP `Update`. Answers false
   * when it is no longer active. Its screens are republished behind the answer.
   */
  async replaceMessage(workspaceId: string, id: string, message: string | null, presentation: Presentation, alert?: EmergencyAlert): Promise<boolean> {
    const ids = await this.db.transaction((tx) =>
      this.repo.replaceMessage(id, message?.trim().slice(0, 1000) || null, presentation, alert ? JSON.stringify(alert) : null, tx.kysely),
    )
    if (ids === null) return false
    this.markDirty(workspaceId, ids).catch(() => undefined) // the publisher logs failures
    return true
  }

  /** The active emergency a CAP alert started (a handling recovered after a crash adopts it), if any. */
  async activeFromCapAlert(workspaceId: string, alertId: string): Promise<EmergencyView | undefined> {
    const r = await this.repo.activeFromCapAlert(workspaceId, alertId)
    return r ? view(r as EmergencyRow) : undefined
  }

  /** Clears it: its screens go back to their cast or assignment unless another emergency holds them. */
  async clear(p: Principal, id: string): Promise<EmergencyView> {
    const r = await this.row(p, id)
    const at = this.clock.now().toISOString()
    const done = await this.db.transaction(async (tx) => {
      const ids = await this.repo.clear(id, at, actorRef(p), tx.kysely)
      if (ids === null) return null
      await refreshCastPause(tx, await castsOnScreens(tx, ids))
      const v = view((await this.repo.byId(id, tx.kysely)) as EmergencyRow)
      await this.outbox.record(tx, { event: 'emergency.cleared', workspaceId: p.workspaceId, occurredAt: at, data: { ...v } })
      return { ids, v }
    })
    if (done === null) throw new ApiError('already_inactive', 'The emergency has already been cleared.')
    const answer = await this.withDelivery(done.v)
    this.markDirty(r.workspace_id, done.ids).catch(() => undefined) // published behind the answer; the publisher logs failures
    this.outbox.dispatch().catch(() => undefined) // behind the answer too
    return answer
  }
}
