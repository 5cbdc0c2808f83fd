// Which screens an action aims at: the one target selection behind casts, emergencies,
// serial jobs and bulk assignment, with one set of errors. A scope is `screens` (with
// `screenIds`), `node` (with `scopeNodeId`: that location and everything under it) or
// `all`; every result is limited to the screens the calling credential reaches.
//   validation_error: screenIds / scopeNodeId missing for their kind, or sent with another
//                     kind; more screens than `max`
//   invalid_node:     scopeNodeId is not a location of this workspace the credential reaches
//   no_screens:       nothing matched (unless the caller accepts an empty target)
import type { Principal } from '../auth/Principal.js'
import { ApiError, validation } from '../errors.js'
import type { ScreenRepository } from '../repositories/ScreenRepository.js'
import type { NodeService } from './NodeService.js'

export const SCOPE_KINDS = ['screens', 'node', 'all'] as const
export type ScopeKind = (typeof SCOPE_KINDS)[number]

export interface TargetScope {
  scopeKind?: ScopeKind | undefined
  screenIds?: string[] | undefined
  scopeNodeId?: string | undefined
}

export interface Targets {
  scopeKind: ScopeKind
  scopeNodeId: string | null
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
}

export async function resolveTargets(
  nodes: NodeService,
  screens: ScreenRepository,
  p: Principal,
  scope: TargetScope,
  opts: TargetOptions = {},
): Promise<Targets> {
  const scopeKind = scope.scopeKind ?? 'all'
  const nodeField = opts.nodeField ?? 'scopeNodeId'
  if (scopeKind !== 'screens' && scope.screenIds !== undefined) throw validation('screenIds is only used with scopeKind "screens".')
  if (scopeKind !== 'node' && scope.scopeNodeId !== undefined) throw validation(`${nodeField} is only used with scopeKind "node".`)
  const scopeIds = await nodes.scopeIds(p)
  let scopeNodeId: string | null = null
  let rows: { id: string; node_id: string | null }[]
  let missing: string[] = []
  if (scopeKind === 'screens') {
    if (!Array.isArray(scope.screenIds) || !scope.screenIds.length) throw validation('screenIds is required (at least one) when scopeKind is "screens".')
    const ids = [...new Set(scope.screenIds)]
    if (opts.max !== undefined && ids.length > opts.max) throw validation(`screenIds: at most ${opts.max} screens per request.`)
    rows = await screens.targets(p.workspaceId, { scopeIds, ids })
    const found = new Set(rows.map((r) => r.id))
    missing = ids.filter((id) => !found.has(id))
  } else if (scopeKind === 'node') {
    if (!scope.scopeNodeId) throw validation(`${nodeField} is required when scopeKind is "node".`)
    scopeNodeId = await nodes.resolveHome(p, scope.scopeNodeId)
    rows = await screens.targets(p.workspaceId, { scopeIds, nodeIds: await nodes.subtree(p.workspaceId, scopeNodeId!) })
  } else {
    rows = await screens.targets(p.workspaceId, { scopeIds })
  }
  if (opts.max !== undefined && rows.length > opts.max) {
    throw validation(
      `${nodeField}: the location holds ${rows.length} screens; at most ${opts.max} per request (send screenIds in batches, or a smaller location).`,
    )
  }
  if (!rows.length && !opts.allowEmpty) throw new ApiError('no_screens', 'The target matched no screen this credential reaches.')
  return { scopeKind, scopeNodeId, screens: rows.map((r) => ({ id: r.id, nodeId: r.node_id })), missing }
}
