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

  /** Screens with a desired state last published before `cutoff` (or never), oldest first: their signed media URLs need renewing. */
  publishedBefore(cutoff: string, limit: number): Promise<{ id: string; workspace_id: string }[]> {
    return (
      this.k
        .selectFrom('screens')
        .select(['id', 'workspace_id'])
        .where('desired_version', '>', 0)
        .where((eb) => eb.or([eb('desired_published_at', 'is', null), eb('desired_published_at', '<', cutoff)]))
        // Never published first, on both engines (PostgreSQL would put NULLs last).
        .orderBy('desired_published_at', (ob) => ob.asc().nullsFirst())
        .orderBy('id')
        .limit(limit)
        .execute()
    )
  }
}
