// Sharing a content item with other locations, so screens there may play it (read-only
// where it is shared in; changed only at home).
import type { Clock } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { notFound, validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import type { NodeService } from '../nodes/index.js'
import type { ContentAccess } from './ContentAccess.js'
import { ContentRepository } from './ContentRepository.js'
import type { ContentService } from './ContentService.js'
import type { ContentKind } from './kinds.js'

export class ContentSharing {
  private readonly repo: ContentRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly nodes: NodeService,
    private readonly access: ContentAccess,
    /** Tells the library's listeners (screens showing the item are republished). */
    private readonly library: Pick<ContentService, 'changed'>,
  ) {
    this.repo = new ContentRepository(db.kysely)
  }

  async listShares(p: Principal, kind: ContentKind, id: string): Promise<{ nodeId: string; createdAt: string }[]> {
    await this.access.requireVisible(p, kind, id)
    return (await this.repo.shares(p.workspaceId, kind, id)).map((r) => ({ nodeId: r.node_id, createdAt: r.created_at }))
  }

  /** Shares the item with another node (idempotent). The target must be a node the credential reaches. */
  async share(p: Principal, kind: ContentKind, id: string, nodeId: string): Promise<{ nodeId: string; createdAt: string }[]> {
    await this.access.requireOwned(p, kind, id)
    const target = await this.nodes.resolveHome(p, nodeId)
    if (target === null) throw validation('nodeId is required.')
    await this.repo.share(p.workspaceId, kind, id, target, this.clock.now().toISOString())
    await this.library.changed(p.workspaceId, kind, id)
    return this.listShares(p, kind, id)
  }

  async unshare(p: Principal, kind: ContentKind, id: string, nodeId: string): Promise<{ nodeId: string; deleted: true }> {
    await this.access.requireOwned(p, kind, id)
    if (!(await this.repo.unshare(p.workspaceId, kind, id, nodeId))) throw notFound('The item is not shared with that location.')
    await this.library.changed(p.workspaceId, kind, id)
    return { nodeId, deleted: true }
  }
}
