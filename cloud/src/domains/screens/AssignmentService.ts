// What a screen plays when no cast or emergency holds it: its assignment
// (screens.content_kind / content_id), set one screen at a time (POST /v1/screens/<id>/assign)
// or in bulk (POST /v1/screens/bulk-assign). Content is checked through the library's
// ContentResolver seam, as casts are: unknown → 422 validation_error, not shared to the
// screen's location → 403 not_shared, cannot play → 422 content_unplayable.
//
// It also keeps screens in step with the library:
// - assigned content cannot be deleted (ContentService usages → 409 conflict);
// - every content change (update, recall, restore, share, processing finished) republishes
//   the desired state of every screen assigned it, directly or through the playlists,
//   schedules and layouts that contain it (ContentService.containing). The takeovers module
//   does the same for the content of live casts and emergencies.
import type { Clock } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import type { Principal } from '../../platform/http/Principal.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import type { ContentKind } from '@svc/shared/mqtt/index'
import type { ContentChangeListener, ContentResolver, ContentService, ContentUsage } from '../content/index.js'
import type { NodeService } from '../nodes/index.js'
import type { Hook } from '../../platform/hooks.js'
import type { MarkDirty } from './ScreenRecords.js'
import { resolveTargets, type GroupConditions } from './targets.js'
import { ScreenRepository } from './ScreenRepository.js'

/** The kinds a screen can be assigned. */
export const ASSIGN_KINDS = ['playlist', 'schedule', 'layout', 'creative', 'signage', 'app', 'media'] as const
export type AssignKind = (typeof ASSIGN_KINDS)[number]

export const BULK_ASSIGN_MAX = 1000

export interface AssignInput {
  contentKind?: AssignKind | null | undefined
  contentId?: string | null | undefined
}

export interface AssignmentResult {
  screenId: string
  contentKind: AssignKind | null
  contentId: string | null
  /** What the screen was assigned before this call. */
  previous: { contentKind: string; contentId: string } | null
  /** The desired-state version that carries this assignment to the device. */
  desiredVersion: number
  assignedAt: string
}

export type SkipReason = 'not_found' | 'not_shared'

export type BulkAssignInput = AssignInput & { screenIds?: string[] | undefined; nodeId?: string | null | undefined; groupId?: string | undefined }

/** An assignment as a dry run answers it: what the screens would be assigned. */
export interface AssignPlan {
  kind: 'assign'
  contentKind: AssignKind | null
  contentId: string | null
  screenIds: string[]
}

export interface BulkAssignResult {
  contentKind: AssignKind | null
  contentId: string | null
  assigned: number
  /** Screens left unchanged, counted by reason (every reason always present). */
  skipped: Record<SkipReason, number>
  /** The screens now assigned, by id. */
  screenIds: string[]
  /** Each skipped screen and why (ids as sent, for not_found). */
  skippedScreens: { screenId: string; reason: SkipReason }[]
  assignedAt: string
}

export class AssignmentService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly nodes: NodeService,
    private readonly resolver: ContentResolver,
    private readonly markDirty: MarkDirty,
    private readonly log: { error(obj: unknown, msg: string): void },
    /** The content library, and its hooks: what blocks a delete, and changes that republish screens. */
    private readonly content: { library: Pick<ContentService, 'containing'>; usage: Hook<ContentUsage>; changes: Hook<ContentChangeListener> },
    /** How a `groupId` target selects its screens. */
    private readonly groups?: GroupConditions,
  ) {
    this.screenRows = new ScreenRepository(db.kysely)
    this.joinContent(content.usage, content.changes)
  }
  private readonly screenRows: ScreenRepository

  /** Adds the usages that block deletes and the change listener that republishes screens. */
  private joinContent(usage: Hook<ContentUsage>, changes: Hook<ContentChangeListener>): void {
    usage.add(async (ws, kind, id) => {
      return { what: 'screen(s) assigned to it', count: await this.screenRows.countAssigned(ws, kind, id) }
    })
    changes.add(async (ws, kind, id) => {
      const screens = await this.screensShowing(ws, id)
      if (screens.length)
        void this.markDirty(ws, screens).catch((err) => this.log.error({ err, kind, id }, 'republishing screens after a content change failed'))
    })
  }

  /**
   * Every screen assigned this content or anything containing it (playlist items, schedule
   * rules and fallback, layout zones): those whose desired state may describe it.
   */
  async screensShowing(workspaceId: string, id: string): Promise<string[]> {
    return this.screenRows.assignedAny(workspaceId, await this.content.library.containing(workspaceId, [id]))
  }

  /** contentKind null (or absent with contentId null) clears; otherwise both are required. */
  private parse(input: AssignInput): { kind: AssignKind; id: string } | null {
    const kind = input.contentKind
    const id = input.contentId
    if (kind === undefined && id === undefined) throw validation('contentKind is required (null clears the assignment).')
    if (kind === null || kind === undefined) {
      if (id !== null && id !== undefined) throw validation('contentKind is required with contentId (null clears the assignment).')
      return null
    }
    if (!id) throw validation('contentId is required with contentKind.')
    return { kind, id }
  }

  /** Unknown content is a validation error naming contentId. */
  private async checkContent(workspaceId: string, ref: { kind: AssignKind; id: string }): Promise<void> {
    const r = { kind: ref.kind as ContentKind, id: ref.id }
    if (!(await this.resolver.exists(workspaceId, r))) throw validation(`contentId: unknown content (${ref.kind} ${JSON.stringify(ref.id)}).`)
  }

  private async playableOrThrow(workspaceId: string, ref: { kind: AssignKind; id: string }): Promise<void> {
    const p = await this.resolver.playability(workspaceId, { kind: ref.kind as ContentKind, id: ref.id })
    if (!p.playable) throw new ApiError('content_unplayable', `The ${ref.kind} cannot play: ${p.reason}`)
  }

  private async sharedTo(workspaceId: string, ref: { kind: AssignKind; id: string }, nodeIds: Iterable<string | null>): Promise<Set<string | null>> {
    const ok = new Set<string | null>()
    for (const n of new Set(nodeIds)) if (await this.resolver.isAvailableAt(workspaceId, { kind: ref.kind as ContentKind, id: ref.id }, n)) ok.add(n)
    return ok
  }

  private async publish(workspaceId: string, screenIds: string[]): Promise<void> {
    if (!screenIds.length) return
    // Waited for, so the answer's desiredVersion is the one the device got; a broker
    // failure is logged (the state is stored and goes out with the next publish).
    await this.markDirty(workspaceId, screenIds).catch((err) => this.log.error({ err }, 'publishing assignments failed'))
  }

  /** The checks of an assignment, in the order the write makes them: screen, content, sharing, playability. */
  private async checkOne(p: Principal, screenId: string, input: AssignInput) {
    const screen = await this.screenRows.assignmentOf(p.workspaceId, screenId)
    if (!screen || !(await this.nodes.reaches(p, screen.node_id))) throw notFound('No such screen.')
    const ref = this.parse(input)
    if (ref) {
      await this.checkContent(p.workspaceId, ref)
      if (!(await this.sharedTo(p.workspaceId, ref, [screen.node_id])).size)
        throw new ApiError('not_shared', `The ${ref.kind} is not shared to the screen's location.`)
      await this.playableOrThrow(p.workspaceId, ref)
    }
    return { screen, ref }
  }

  async assign(p: Principal, screenId: string, input: AssignInput): Promise<AssignmentResult> {
    const { screen, ref } = await this.checkOne(p, screenId, input)
    const now = this.clock.now().toISOString()
    await this.screenRows.setAssignment(p.workspaceId, [screenId], { kind: ref?.kind ?? null, id: ref?.id ?? null }, now)
    await this.publish(p.workspaceId, [screenId])
    return {
      screenId,
      contentKind: ref?.kind ?? null,
      contentId: ref?.id ?? null,
      previous: screen.content_kind && screen.content_id ? { contentKind: screen.content_kind, contentId: screen.content_id } : null,
      desiredVersion: await this.screenRows.desiredVersion(p.workspaceId, screenId),
      assignedAt: now,
    }
  }

  /** What `assign` would do, checked the same way, writing nothing (the timeline preview). */
  async planAssign(p: Principal, screenId: string, input: AssignInput): Promise<AssignPlan> {
    const { ref } = await this.checkOne(p, screenId, input)
    return { kind: 'assign', contentKind: ref?.kind ?? null, contentId: ref?.id ?? null, screenIds: [screenId] }
  }

  /** The screens a bulk assignment takes and those it skips, checked as the write checks them. */
  private async selectBulk(p: Principal, input: BulkAssignInput) {
    if ([input.screenIds, input.nodeId, input.groupId].filter((v) => v !== undefined).length !== 1)
      throw validation('Send one of screenIds, nodeId or groupId.')
    const ref = this.parse(input)
    const skippedScreens: { screenId: string; reason: SkipReason }[] = []
    // The shared target selection: screenIds, or nodeId (null = the credential's whole reach).
    const scope =
      input.screenIds !== undefined
        ? { scopeKind: 'screens' as const, screenIds: input.screenIds }
        : input.nodeId === null
          ? { scopeKind: 'all' as const }
          : input.groupId !== undefined
            ? { scopeKind: 'group' as const, groupId: input.groupId }
            : { scopeKind: 'node' as const, scopeNodeId: input.nodeId! }
    const t = await resolveTargets(this.nodes, this.screenRows, p, scope, { allowEmpty: true, max: BULK_ASSIGN_MAX, nodeField: 'nodeId', groups: this.groups })
    for (const id of t.missing) skippedScreens.push({ screenId: id, reason: 'not_found' })
    const targets = t.screens.map((s) => ({ id: s.id, node_id: s.nodeId }))
    let assigned = targets
    if (ref) {
      await this.checkContent(p.workspaceId, ref)
      await this.playableOrThrow(p.workspaceId, ref)
      const ok = await this.sharedTo(
        p.workspaceId,
        ref,
        targets.map((s) => s.node_id),
      )
      assigned = []
      for (const s of targets) {
        if (ok.has(s.node_id)) assigned.push(s)
        else skippedScreens.push({ screenId: s.id, reason: 'not_shared' })
      }
    }
    return { ref, ids: assigned.map((s) => s.id), skippedScreens }
  }

  async bulkAssign(p: Principal, input: BulkAssignInput): Promise<BulkAssignResult> {
    const { ref, ids, skippedScreens } = await this.selectBulk(p, input)
    const now = this.clock.now().toISOString()
    if (ids.length) {
      // One transaction: every chosen screen is assigned, or none.
      await this.db.transaction((tx) => this.screenRows.setAssignment(p.workspaceId, ids, { kind: ref?.kind ?? null, id: ref?.id ?? null }, now, tx.kysely))
    }
    await this.publish(p.workspaceId, ids)
    const skipped: Record<SkipReason, number> = { not_found: 0, not_shared: 0 }
    for (const s of skippedScreens) skipped[s.reason]++
    return { contentKind: ref?.kind ?? null, contentId: ref?.id ?? null, assigned: ids.length, skipped, screenIds: ids, skippedScreens, assignedAt: now }
  }

  /** What `bulkAssign` would do, checked the same way, writing nothing (the timeline preview). */
  async planBulkAssign(p: Principal, input: BulkAssignInput): Promise<AssignPlan> {
    const { ref, ids } = await this.selectBulk(p, input)
    return { kind: 'assign', contentKind: ref?.kind ?? null, contentId: ref?.id ?? null, screenIds: ids }
  }
}
