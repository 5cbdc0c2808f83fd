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

/** What the desired-state builder reads from a screen. */
export interface DesiredScreenRow {
  id: string
  node_id: string | null
  content_kind: string | null
  content_id: string | null
  timezone: string
  desired_version: number
  panel_protocol: string | null
  panel_set_id: number | null
  panel_poll_seconds: number | null
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

  // ---- desired state (the builder and the publisher) ----

  /** The columns a desired state is built from, for a batch of the workspace's screens (any order). */
  forDesiredState(workspaceId: string, ids: readonly string[]): Promise<DesiredScreenRow[]> {
    if (!ids.length) return Promise.resolve([])
    return this.k
      .selectFrom('screens')
      .select(['id', 'node_id', 'content_kind', 'content_id', 'timezone', 'desired_version', 'panel_protocol', 'panel_set_id', 'panel_poll_seconds'])
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', ids)
      .execute()
  }

  /**
   * Takes the next desired version of each screen (one UPDATE and one SELECT); with
   * `publishedAt`, also records it as `desired_published_at`. Answers [screenId, version].
   */
  async bumpDesiredVersions(workspaceId: string, ids: readonly string[], publishedAt: string | null, k: Executor = this.k): Promise<[string, number][]> {
    if (!ids.length) return []
    await k
      .updateTable('screens')
      .set((eb) => ({ desired_version: eb('desired_version', '+', 1), ...(publishedAt ? { desired_published_at: publishedAt } : {}) }))
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', ids)
      .execute()
    const rows = await k.selectFrom('screens').select(['id', 'desired_version']).where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute()
    return rows.map((r) => [r.id, Number(r.desired_version)])
  }
}
