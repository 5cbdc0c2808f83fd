// Which screens an action aims at: the one target selection behind casts, emergencies,
// serial jobs, bulk assignment and tagging, with one set of errors. A scope is `screens`
// (with `screenIds`), `node` (with `scopeNodeId`: that location and everything under it),
// `group` (with `groupId`: a group's members, as the targeting domain resolves them) or
// `all`; every result is limited to the screens the calling credential reaches.
//   validation_error: screenIds / scopeNodeId / groupId missing for their kind, or sent with
//                     another kind; more screens than `max`; a group this credential does not see
//   invalid_node:     scopeNodeId is not a location of this workspace the credential reaches
//   no_screens:       nothing matched (unless the caller accepts an empty target)
import type { RawBuilder } from 'kysely'
import type { Principal } from '../../platform/http/Principal.js'
import { ApiError, validation } from '../../platform/errors.js'
import type { ScreenRepository, TargetFilter } from './ScreenRepository.js'
import type { NodeService } from '../nodes/index.js'

export const SCOPE_KINDS = ['screens', 'node', 'group', 'all'] as const
export type ScopeKind = (typeof SCOPE_KINDS)[number]

export interface TargetScope {
  scopeKind?: ScopeKind | undefined
  screenIds?: string[] | undefined
  scopeNodeId?: string | undefined
  groupId?: string | undefined
}

/**
 * Turns a group into the SQL condition on a `screens` row that selects its members (the
 * targeting domain's groups; 422 validation_error naming `field` for a group the credential
 * does not see).
 */
export interface GroupConditions {
  memberCondition(p: Principal, groupId: string, field: string): Promise<RawBuilder<boolean>>
}

export interface Targets {
  scopeKind: ScopeKind
  scopeNodeId: string | null
  groupId: string | null
  /** In id order. */
  screens: { id: string; nodeId: string | null }[]
  /** Requested screenIds that matched no reachable screen (scopeKind `screens`). */
  missing: string[]
}

export interface TargetOptions {
  /** Answer an empty target instead of 422 no_screens (bulk assignment reports skips instead). */
  allowEmpty?: boolean
  /** Most screens one request may target (422 beyond). */
  max?: number
  /** Field name used in messages for the node (bulk assignment calls it `nodeId`). */
  nodeField?: string
  /** Field name used in messages for the group (default `groupId`). */
  groupField?: string
  /** How groups resolve; without it, scopeKind "group" is refused. */
  groups?: GroupConditions | undefined
}

/** A validated scope: the filter that selects its screens (ScreenRepository.targets / targetIds). */
export interface TargetSelection {
  scopeKind: ScopeKind
  scopeNodeId: string | null
  groupId: string | null
  filter: TargetFilter
  /** The distinct screenIds asked for (scopeKind `screens`). */
  ids: string[] | null
}

/** Validates the scope and resolves its location, without reading the screens (set-based callers select them in SQL). */
export async function resolveSelection(nodes: NodeService, p: Principal, scope: TargetScope, opts: TargetOptions = {}): Promise<TargetSelection> {
  const scopeKind = scope.scopeKind ?? 'all'
  const nodeField = opts.nodeField ?? 'scopeNodeId'
  if (scopeKind !== 'screens' && scope.screenIds !== undefined) throw validation('screenIds is only used with scopeKind "screens".')
  if (scopeKind !== 'node' && scope.scopeNodeId !== undefined) throw validation(`${nodeField} is only used with scopeKind "node".`)
  const groupField = opts.groupField ?? 'groupId'
  if (scopeKind !== 'group' && scope.groupId !== undefined) throw validation(`${groupField} is only used with scopeKind "group".`)
  const scopeIds = await nodes.scopeIds(p)
  if (scopeKind === 'group') {
    if (!opts.groups) throw validation('scopeKind "group" is not accepted here.')
    if (!scope.groupId) throw validation(`${groupField} is required when scopeKind is "group".`)
    const where = await opts.groups.memberCondition(p, scope.groupId, groupField)
    return { scopeKind, scopeNodeId: null, groupId: scope.groupId, filter: { scopeIds, where }, ids: null }
  }
  if (scopeKind === 'screens') {
    if (!Array.isArray(scope.screenIds) || !scope.screenIds.length) throw validation('screenIds is required (at least one) when scopeKind is "screens".')
    const ids = [...new Set(scope.screenIds)]
    if (opts.max !== undefined && ids.length > opts.max) throw validation(`screenIds: at most ${opts.max} screens per request.`)
    return { scopeKind, scopeNodeId: null, groupId: null, filter: { scopeIds, ids }, ids }
  }
  if (scopeKind === 'node') {
    if (!scope.scopeNodeId) throw validation(`${nodeField} is required when scopeKind is "node".`)
    const scopeNodeId = (await nodes.resolveHome(p, scope.scopeNodeId))!
    return { scopeKind, scopeNodeId, groupId: null, filter: { scopeIds, nodeIds: await nodes.subtree(p.workspaceId, scopeNodeId) }, ids: null }
  }
  return { scopeKind, scopeNodeId: null, groupId: null, filter: { scopeIds }, ids: null }
}

export async function resolveTargets(
  nodes: NodeService,
  screens: Pick<ScreenRepository, 'targets'>,
  p: Principal,
  scope: TargetScope,
  opts: TargetOptions = {},
): Promise<Targets> {
  const nodeField = opts.nodeField ?? 'scopeNodeId'
  const { scopeKind, scopeNodeId, groupId, filter, ids } = await resolveSelection(nodes, p, scope, opts)
  const rows = await screens.targets(p.workspaceId, filter)
  let missing: string[] = []
  if (ids) {
    const found = new Set(rows.map((r) => r.id))
    missing = ids.filter((id) => !found.has(id))
  }
  if (opts.max !== undefined && rows.length > opts.max) {
    throw validation(
      scopeKind === 'group'
        ? `${opts.groupField ?? 'groupId'}: the group holds ${rows.length} screens; at most ${opts.max} per request.`
        : `${nodeField}: the location holds ${rows.length} screens; at most ${opts.max} per request (send screenIds in batches, or a smaller location).`,
    )
  }
  if (!rows.length && !opts.allowEmpty) throw new ApiError('no_screens', 'The target matched no screen this credential reaches.')
  return { scopeKind, scopeNodeId, groupId, screens: rows.map((r) => ({ id: r.id, nodeId: r.node_id })), missing }
}
