// The owner of `api_keys`. Only what the converted services need is here so far; the key
// service's own queries move in with it.
import type { Executor } from '../db/Database.js'

export class ApiKeyRepository {
  constructor(private readonly k: Executor) {}

  /** Revoked keys pinned at `nodeId` no longer act anywhere: unpin them so the node can go. */
  async unpinRevoked(workspaceId: string, nodeId: string, k: Executor = this.k): Promise<void> {
    await k
      .updateTable('api_keys')
      .set({ node_id: null })
      .where('node_id', '=', nodeId)
      .where('workspace_id', '=', workspaceId)
      .where('revoked_at', 'is not', null)
      .execute()
  }
}
