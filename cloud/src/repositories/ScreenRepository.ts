// The owner of `screens`. So far only the reads target selection needs; the screen
// services' own queries move in with them.
import type { Executor } from '../db/Database.js'
import { withinNodes } from './paging.js'

export interface TargetFilter {
  /** Node ids the credential reaches; null = all. */
  scopeIds: string[] | null
  /** Only these screens (absent = any). */
  ids?: string[]
  /** Only screens homed at these nodes (absent = any). */
  nodeIds?: string[]
}

export class ScreenRepository {
  constructor(private readonly k: Executor) {}

  /** Screens of the workspace matching the filter, in id order, with their home node. */
  targets(workspaceId: string, f: TargetFilter): Promise<{ id: string; node_id: string | null }[]> {
    if (f.ids?.length === 0 || f.nodeIds?.length === 0) return Promise.resolve([])
    let q = withinNodes(this.k.selectFrom('screens').select(['id', 'node_id']).where('workspace_id', '=', workspaceId), 'node_id', f.scopeIds)
    if (f.ids) q = q.where('id', 'in', f.ids)
    if (f.nodeIds) q = q.where('node_id', 'in', f.nodeIds)
    return q.orderBy('id', 'asc').execute()
  }
}
