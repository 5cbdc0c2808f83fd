// What casts and emergencies share: the target (scopeKind screens | node | group |
// all, limited to the screens the calling credential reaches), the content checks
// (exists → 422 validation_error, playable → 422 content_unplayable, shared to every
// target screen's location → 403 not_shared) and expiresAt parsing.
import type { Principal } from '../../platform/http/Principal.js'
import { ApiError, validation } from '../../platform/errors.js'
import type { NodeService } from '../nodes/index.js'
import { resolveSelection, type GroupConditions, type ScopeKind, type ScreenRecords, type TargetFilter, type TargetScope } from '../screens/index.js'
import type { Executor } from '../../platform/db/Database.js'
import type { ContentKind } from '@svc/shared/mqtt/index'
import type { ContentResolver } from '../content/index.js'

export const TAKEOVER_CONTENT_KINDS = ['media', 'playlist', 'app', 'creative', 'schedule'] as const
export { SCOPE_KINDS, type ScopeKind } from '../screens/index.js'
export type TargetInput = TargetScope

/**
 * The screens a takeover aims at, without reading them: the filter that selects them in SQL
 * (`screenIds`), how many matched and their home nodes (for the content checks).
 */
export interface Target {
  scopeKind: ScopeKind
  scopeNodeId: string | null
  groupId: string | null
  filter: TargetFilter
  screenCount: number
  nodeIds: (string | null)[]
}

/** A cast or an emergency as a dry run answers it (the timeline preview): what would take which screens. */
export interface TakeoverPlan {
  kind: 'cast' | 'emergency'
  /** null: an emergency without content (started by a CAP feed naming none). */
  contentKind: ContentKind | null
  contentId: string | null
  contentName: string | null
  /** Casts: when it would end (null = until cleared). */
  expiresAt: string | null
  /** Emergencies: the text shown over the content. */
  message: string | null
  /** The screens it would take, as the write selects them. */
  filter: TargetFilter
  screenCount: number
}

export class Takeover {
  constructor(
    private readonly screens: ScreenRecords,
    private readonly nodes: NodeService,
    private readonly content: ContentResolver,
    private readonly groups: GroupConditions,
  ) {}

  /** 422 no_screens when nothing matched. */
  async resolveTarget(p: Principal, input: TargetInput): Promise<Target> {
    const t = await resolveSelection(this.nodes, p, input, { groups: this.groups })
    const counts = await this.screens.targetCounts(p.workspaceId, t.filter)
    const screenCount = counts.reduce((a, c) => a + c.n, 0)
    if (!screenCount) throw new ApiError('no_screens', 'The target matched no screen this credential reaches.')
    return { scopeKind: t.scopeKind, scopeNodeId: t.scopeNodeId, groupId: t.groupId, filter: t.filter, screenCount, nodeIds: counts.map((c) => c.nodeId) }
  }

  /** The filter selecting the target's screens now, whether or not any match (a following emergency). */
  async filterOf(p: Principal, input: TargetInput): Promise<TargetFilter> {
    return (await resolveSelection(this.nodes, p, input, { groups: this.groups })).filter
  }

  /** The target's screen ids as a subquery on `k` (for INSERT … SELECT and IN (…)). */
  screenIds(workspaceId: string, target: Target, k: Executor) {
    return this.screens.targetIds(workspaceId, target.filter, k)
  }

  /** Checks the content can take the target over; answers its name (null when it has none). */
  async checkContent(workspaceId: string, kind: ContentKind, id: string, target: Target): Promise<string | null> {
    const ref = { kind, id }
    if (!(await this.content.exists(workspaceId, ref))) throw validation(`contentId: unknown content (${kind} ${JSON.stringify(id)}).`)
    const playable = await this.content.playability(workspaceId, ref)
    if (!playable.playable) throw new ApiError('content_unplayable', `The ${kind} cannot play: ${playable.reason}.`)
    for (const nodeId of target.nodeIds) {
      if (!(await this.content.isAvailableAt(workspaceId, ref, nodeId))) {
        throw new ApiError('not_shared', `The ${kind} is not shared to the location of every target screen.`)
      }
    }
    return (await this.content.describeForDevice(workspaceId, ref))?.name ?? null
  }
}

/** ISO 8601 date-time or epoch milliseconds; must be in the future. Returns ISO or null. */
export function parseExpiresAt(raw: string | number | null | undefined, now: Date): string | null {
  if (raw === undefined || raw === null) return null
  let t: number
  if (typeof raw === 'number') {
    if (!Number.isSafeInteger(raw) || raw < 0) throw validation('expiresAt must be an ISO 8601 date-time or epoch milliseconds.')
    t = raw
  } else {
    const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/
    t = iso.test(raw) ? Date.parse(raw) : NaN
    if (Number.isNaN(t)) throw validation('expiresAt must be an ISO 8601 date-time (with a zone) or epoch milliseconds.')
  }
  if (t <= now.getTime()) throw validation('expiresAt must be in the future.')
  return new Date(t).toISOString()
}

export function inList(n: number): string {
  return Array.from({ length: n }, () => '?').join(',')
}
