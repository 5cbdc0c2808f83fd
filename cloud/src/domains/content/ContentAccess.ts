// Who may see or change a content item, and where it may play: an item's home location
// and the locations it is shared with, against a credential's reach or a screen's node.
// Every job of the library (its CRUD, sharing, recall, playback) asks here first.
import type { Database } from '../../platform/db/Database.js'
import { ApiError, notFound } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import type { NodeService } from '../nodes/index.js'
import { ContentRepository } from './ContentRepository.js'
import type { Located } from './library.js'
import { type ContentKind, KIND_BY_NAME, type Body } from './kinds.js'

export class ContentAccess {
  private readonly repo: ContentRepository

  constructor(
    db: Database,
    private readonly nodes: NodeService,
  ) {
    this.repo = new ContentRepository(db.kysely)
  }

  /** SQL keeping rows (of `kind`) whose home the credential reaches or that are shared into its subtree. */
  async visibleClause(p: Principal, kind: ContentKind, table: string): Promise<{ sql: string; params: string[] }> {
    return ContentRepository.visibleSql(p.workspaceId, kind, table, await this.scopeIds(p))
  }

  /** The nodes the credential reaches (null = the whole workspace). */
  async scopeIds(p: Principal): Promise<string[] | null> {
    return p.nodeId ? this.nodes.subtree(p.workspaceId, p.nodeId) : null
  }

  async locate(workspaceId: string, kind: ContentKind, id: string): Promise<Located | undefined> {
    if (kind === 'media') {
      const m = await this.repo.mediaById(workspaceId, id)
      return m && { kind, id, workspaceId, name: m.name, nodeId: m.node_id, recalledAt: m.recalled_at, recallReason: m.recall_reason, media: m }
    }
    const r = await this.repo.itemById(workspaceId, id, kind)
    return (
      r && {
        kind,
        id,
        workspaceId,
        name: r.name,
        nodeId: r.node_id,
        recalledAt: r.recalled_at,
        recallReason: r.recall_reason,
        body: JSON.parse(r.body) as Body,
      }
    )
  }

  async sharedNodes(workspaceId: string, kind: ContentKind, id: string): Promise<string[]> {
    return (await this.repo.shares(workspaceId, kind, id)).map((r) => r.node_id)
  }

  /** Can the credential see this item (home in its subtree, or shared into it)? */
  async canSee(p: Principal, item: Located): Promise<boolean> {
    if (await this.nodes.reaches(p, item.nodeId)) return true
    if (!p.nodeId) return false
    for (const n of await this.sharedNodes(p.workspaceId, item.kind, item.id)) {
      if ((await this.nodes.isWithin(p.workspaceId, n, p.nodeId)) || (await this.nodes.isWithin(p.workspaceId, p.nodeId, n))) return true
    }
    return false
  }

  /** The item as the credential may read it; 404 when absent, in another workspace or out of reach. */
  async requireVisible(p: Principal, kind: ContentKind, id: string): Promise<Located> {
    const item = await this.locate(p.workspaceId, kind, id)
    if (!item || !(await this.canSee(p, item)))
      throw notFound(`No such ${kind === 'media' ? 'media item' : (KIND_BY_NAME.get(kind)?.label.toLowerCase() ?? kind)}.`)
    return item
  }

  /** As requireVisible, and the credential must reach the item's home to change it (shared-in items are read-only). */
  async requireOwned(p: Principal, kind: ContentKind, id: string): Promise<Located> {
    const item = await this.requireVisible(p, kind, id)
    if (!(await this.nodes.reaches(p, item.nodeId)))
      throw new ApiError('forbidden', 'This content is shared to your location but lives elsewhere; it can be used here, not changed.')
    return item
  }

  /**
   * True when a screen at `screenNodeId` (null = workspace root) may play the item: the
   * screen's node is in the subtree of the item's home, or of a node it is shared with.
   */
  async isAvailableAt(workspaceId: string, kind: ContentKind, id: string, screenNodeId: string | null): Promise<boolean> {
    const item = await this.locate(workspaceId, kind, id)
    if (!item) return false
    if (await this.nodes.isWithin(workspaceId, screenNodeId, item.nodeId)) return true
    for (const n of await this.sharedNodes(workspaceId, kind, id)) if (await this.nodes.isWithin(workspaceId, screenNodeId, n)) return true
    return false
  }

  /** 422 invalid_folder unless `id` is a media folder of the workspace the credential can see. */
  async requireFolder(p: Principal, id: string, field = 'folderId'): Promise<void> {
    const f = await this.locate(p.workspaceId, 'folder', id)
    if (!f || !(await this.canSee(p, f))) throw new ApiError('invalid_folder', `${field}: ${JSON.stringify(id)} is not a media folder in this workspace.`)
  }
}
