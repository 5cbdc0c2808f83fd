// What casts and emergencies share: the target (SPEC "Casts": scopeKind screens | node |
// all, limited to the screens the calling credential reaches), the content checks
// (exists → 422 validation_error, playable → 422 content_unplayable, shared to every
// target screen's location → 403 not_shared) and expiresAt parsing.
import type { Database } from '../db/Database.js'
import type { Principal } from '../auth/Principal.js'
import { ApiError, validation } from '../errors.js'
import type { NodeService } from '../services/NodeService.js'
import type { ContentKind } from '@svc/shared/mqtt/index'
import type { ContentResolver } from './ContentResolver.js'

export const TAKEOVER_CONTENT_KINDS = ['media', 'playlist', 'app', 'creative', 'schedule'] as const
export const SCOPE_KINDS = ['screens', 'node', 'all'] as const
export type ScopeKind = (typeof SCOPE_KINDS)[number]

export interface TargetInput {
  scopeKind?: ScopeKind | undefined
  screenIds?: string[] | undefined
  scopeNodeId?: string | undefined
}

export interface Target {
  scopeKind: ScopeKind
  scopeNodeId: string | null
  screens: { id: string; nodeId: string | null }[]
}

export class Takeover {
  constructor(
    private readonly db: Database,
    private readonly nodes: NodeService,
    private readonly content: ContentResolver,
  ) {}

  async resolveTarget(p: Principal, input: TargetInput): Promise<Target> {
    const scopeKind = input.scopeKind ?? 'all'
    if (scopeKind !== 'screens' && input.screenIds !== undefined) throw validation('screenIds is only used with scopeKind "screens".')
    if (scopeKind !== 'node' && input.scopeNodeId !== undefined) throw validation('scopeNodeId is only used with scopeKind "node".')
    const scope = await this.nodes.scopeClause(p, 'node_id')
    let where = `workspace_id = ?${scope.sql}`
    const params: string[] = [p.workspaceId, ...scope.params]
    let scopeNodeId: string | null = null
    if (scopeKind === 'screens') {
      if (!input.screenIds?.length) throw validation('screenIds is required (at least one) when scopeKind is "screens".')
      const ids = [...new Set(input.screenIds)]
      where += ` AND id IN (${ids.map(() => '?').join(',')})`
      params.push(...ids)
    } else if (scopeKind === 'node') {
      if (!input.scopeNodeId) throw validation('scopeNodeId is required when scopeKind is "node".')
      scopeNodeId = await this.nodes.resolveHome(p, input.scopeNodeId)
      const subtree = await this.nodes.subtree(p.workspaceId, scopeNodeId!)
      where += ` AND node_id IN (${subtree.map(() => '?').join(',')})`
      params.push(...subtree)
    }
    const rows = await this.db.all<{ id: string; node_id: string | null }>(`SELECT id, node_id FROM screens WHERE ${where} ORDER BY id`, params)
    if (!rows.length) throw new ApiError('no_screens', 'The target matched no screen this credential reaches.')
    return { scopeKind, scopeNodeId, screens: rows.map((r) => ({ id: r.id, nodeId: r.node_id })) }
  }

  /** Checks the content can take the target over; answers its name (null when it has none). */
  async checkContent(workspaceId: string, kind: ContentKind, id: string, target: Target): Promise<string | null> {
    const ref = { kind, id }
    if (!(await this.content.exists(workspaceId, ref))) throw validation(`contentId: unknown content (${kind} ${JSON.stringify(id)}).`)
    const playable = await this.content.playability(workspaceId, ref)
    if (!playable.playable) throw new ApiError('content_unplayable', `The ${kind} cannot play: ${playable.reason}.`)
    for (const nodeId of new Set(target.screens.map((s) => s.nodeId))) {
      if (!(await this.content.isAvailableAt(workspaceId, ref, nodeId))) {
        throw new ApiError('not_shared', `The ${kind} is not shared to the location of every target screen.`)
      }
    }
    return (await this.content.describeForDevice(workspaceId, ref))?.name ?? null
  }
}

/** SPEC: ISO 8601 date-time or epoch milliseconds; must be in the future. Returns ISO or null. */
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
