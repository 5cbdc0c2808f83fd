// Casts: put content on screens now, above their assignment, until
// cleared or expiresAt. Statuses (docs/decisions.md): `active`; `paused` while an
// emergency holds every screen the cast still plays on; ended as `cleared`, `expired` or
// `replaced` (a newer cast took all of its screens; `replacedBy` names it). Which screens a
// cast still holds is derived from cast_screens (domains/takeovers/CastRepository.ts: a newer
// cast's row on a screen takes it). Every change marks the affected
// screens dirty so their desired state is republished.
import { Type, type Static } from '@sinclair/typebox'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import type { Database, Queryable } from '../../platform/db/Database.js'
import { actorRef, type Principal } from '../../platform/http/Principal.js'
import { ApiError } from '../../platform/errors.js'
import type { NodeService } from '../nodes/index.js'
import type { MarkDirtyLater } from '../screens/index.js'
import type { ContentKind } from '@svc/shared/mqtt/index'
import { CastRepository, type ScreenIdQuery } from './CastRepository.js'
import type { ReachReceipts, ScreenReachView } from './ReachReceipts.js'
import type { Page, PageRequest } from '../../platform/paging.js'
import { parseExpiresAt, type ScopeKind, type Takeover, type TakeoverPlan, type TargetInput } from './Takeover.js'

export const CAST_STATUSES = ['active', 'paused', 'cleared', 'expired', 'replaced'] as const
export type CastStatus = (typeof CAST_STATUSES)[number]
export const ENDED_CAST_STATUSES: readonly CastStatus[] = ['cleared', 'expired', 'replaced']
export const CAST_STATUS_FILTERS = [...CAST_STATUSES, 'ended'] as const

type CastRow = RowWith<CastsTable, { status: CastStatus }>

import { Delivery } from './takeoverSchemas.js'
import type { RowWith } from '../../platform/db/schema.js'
import type { CastsTable } from './tables.js'

export { Delivery }

/** A cast as the API answers it: the routes' response schema, and CastView is derived from it. */
export const Cast = Type.Object({
  id: Type.String({ description: 'Prefix `cast_`.' }),
  kind: Type.Literal('cast'),
  status: StringEnum(CAST_STATUSES),
  contentKind: Type.String(),
  contentId: Type.String(),
  contentName: Nullable(Type.String()),
  scopeKind: Type.String(),
  scopeNodeId: Nullable(Type.String()),
  groupId: Nullable(Type.String({ description: 'scopeKind `group`: the group whose members it was cast to (resolved when created).' })),
  screenCount: Type.Integer(),
  triggeredAt: Timestamp,
  expiresAt: Nullable(Timestamp),
  endedAt: Nullable(Timestamp),
  replacedBy: Nullable(Type.String()),
  delivery: Type.Optional(Delivery),
})
export type CastView = Static<typeof Cast>

const view = (r: CastRow): CastView => ({
  id: r.id,
  kind: 'cast',
  status: r.status,
  contentKind: r.content_kind,
  contentId: r.content_id,
  contentName: r.content_name,
  scopeKind: r.scope_kind,
  scopeNodeId: r.scope_node_id,
  groupId: r.scope_group_id ?? null,
  screenCount: r.screen_count,
  triggeredAt: r.triggered_at,
  expiresAt: r.expires_at,
  endedAt: r.ended_at,
  replacedBy: r.replaced_by,
})

export interface CastInput extends TargetInput {
  contentKind: ContentKind
  contentId: string
  expiresAt?: string | number | undefined
  contentName?: string | undefined
}

/**
 * Sets `paused` / `active` on the given live casts: paused exactly when every screen the
 * cast still holds is under an active emergency. Used by casts and emergencies alike.
 */
export async function refreshCastPause(tx: Queryable, castIds: string[]): Promise<void> {
  await new CastRepository(tx.kysely).refreshPause(castIds, tx.kysely)
}

/** Live casts holding any of these screens. */
export async function castsOnScreens(tx: Queryable, screenIds: string[]): Promise<string[]> {
  return new CastRepository(tx.kysely).liveOnScreens(screenIds)
}

/** Live casts of the workspace holding any of the screens `screens` selects. */
export async function castsOnTarget(tx: Queryable, workspaceId: string, screens: ScreenIdQuery): Promise<string[]> {
  return new CastRepository(tx.kysely).liveOnTarget(workspaceId, screens, tx.kysely)
}

export class CastService {
  private readonly changeListeners: (() => void)[] = []
  private readonly repo: CastRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly takeover: Takeover,
    private readonly markDirty: MarkDirtyLater,
    private readonly reach: ReachReceipts,
  ) {
    this.repo = new CastRepository(db.kysely)
  }

  /** Called after casts are created or end (the expiry timer re-arms on it). */
  onChange(listener: () => void): void {
    this.changeListeners.push(listener)
  }

  private changed(): void {
    for (const l of this.changeListeners) l()
  }

  private async row(p: Principal, id: string): Promise<CastRow> {
    return this.nodes.findReachable<CastRow>(p, 'casts', id, 'cast')
  }

  /** A page of the cast's screens with how far it got on each (reach receipts). */
  async screens(p: Principal, id: string, page: PageRequest): Promise<Page<ScreenReachView>> {
    const r = await this.row(p, id)
    return this.reach.page('cast', id, r.triggered_at, page)
  }

  /** The cast with its `delivery` counts. */
  async get(p: Principal, id: string): Promise<CastView> {
    const r = await this.row(p, id)
    return { ...view(r), delivery: { targeted: r.screen_count, ...(await this.repo.delivery(id)) } }
  }

  /** The checks of a cast, in the order the write makes them; the name is the caller's label, else the content's own. */
  private async check(p: Principal, input: CastInput, now: Date) {
    const expiresAt = parseExpiresAt(input.expiresAt, now)
    const target = await this.takeover.resolveTarget(p, input)
    const contentName = await this.takeover.checkContent(p.workspaceId, input.contentKind, input.contentId, target)
    const name = input.contentName?.trim().slice(0, 200) || contentName?.slice(0, 200) || null
    return { expiresAt, target, name }
  }

  /** What `create` would do, checked the same way, writing nothing (the timeline preview). */
  async plan(p: Principal, input: CastInput): Promise<TakeoverPlan> {
    const { expiresAt, target, name } = await this.check(p, input, this.clock.now())
    const { contentKind, contentId } = input
    return { kind: 'cast', contentKind, contentId, contentName: name, expiresAt, message: null, filter: target.filter, screenCount: target.screenCount }
  }

  async create(p: Principal, input: CastInput): Promise<CastView> {
    const now = this.clock.now()
    const { expiresAt, target, name } = await this.check(p, input, now)
    const id = this.ids.next('cast')
    const at = now.toISOString()
    const row = {
      id,
      workspace_id: p.workspaceId,
      node_id: target.scopeNodeId ?? p.nodeId,
      content_kind: input.contentKind,
      content_id: input.contentId,
      content_name: name,
      scope_kind: target.scopeKind as ScopeKind,
      scope_node_id: target.scopeNodeId,
      scope_group_id: target.groupId,
      status: 'active',
      screen_count: target.screenCount,
      triggered_at: at,
      expires_at: expiresAt,
      ended_at: null,
      replaced_by: null,
      created_by: actorRef(p),
    }
    // Set-based: the screens are selected in SQL (INSERT … SELECT), never read into the request.
    await this.db.transaction(async (tx) => {
      // The newer cast takes these screens from older ones; an older cast left with none is replaced.
      const { older } = await this.repo.insertTakingScreens(row, this.takeover.screenIds(p.workspaceId, target, tx.kysely), tx.kysely)
      await this.repo.refreshPause([id, ...older], tx.kysely)
    })
    // Answered once stored: publishing goes on behind (the publisher reads the cast's screens
    // after the answer; delivery counts show it arriving). Nothing is published before this
    // answer, so its delivery is 0 / 0 without counting.
    const r = await this.row(p, id)
    this.markDirty(p.workspaceId, () => this.repo.screenIdsOf(id)).catch(() => undefined) // the publisher logs failures
    this.changed()
    return { ...view(r), delivery: { targeted: r.screen_count, published: 0, applied: 0 } }
  }

  async list(p: Principal, filter: { status?: string | undefined; limit: number }): Promise<CastView[]> {
    const rows = await this.repo.list(p.workspaceId, await this.nodes.scopeIds(p), { ...(filter.status ? { status: filter.status } : {}), limit: filter.limit })
    return (rows as CastRow[]).map(view)
  }

  /** Ends the cast now; its screens return to their scheduled content at once. */
  async clear(p: Principal, id: string): Promise<CastView> {
    const r = await this.row(p, id)
    const screens = await this.end(r.workspace_id, id, 'cleared', this.clock.now().toISOString())
    if (screens === null) throw new ApiError('already_inactive', `The cast has already ended (${(await this.row(p, id)).status}).`)
    return this.get(p, id)
  }

  /** Ends every live cast whose expiresAt has passed (the worker and the timer call this). */
  async expireDue(): Promise<number> {
    const now = this.clock.now().toISOString()
    const due = await this.repo.dueBy(now)
    let n = 0
    for (const c of due) if ((await this.end(c.workspace_id, c.id, 'expired', c.expires_at!)) !== null) n++
    return n
  }

  /** The earliest expiresAt among live casts (for the precise timer). */
  async nextExpiry(): Promise<string | null> {
    return this.repo.nextExpiry()
  }

  /** Ends a live cast; returns the screens it released, or null when it was not live. */
  private async end(workspaceId: string, id: string, status: 'cleared' | 'expired', at: string): Promise<string[] | null> {
    const screens = await this.db.transaction((tx) => this.repo.end(id, status, at, tx.kysely))
    if (screens === null) return null
    this.markDirty(workspaceId, screens).catch(() => undefined) // published behind the answer; the publisher logs failures
    this.changed()
    return screens
  }
}
