// The only code that reads or writes `media`, `media_uploads`, `media_upload_parts` and
// `server_secrets` (the media URL signing key), except ContentService's own look-ups of a
// media row, which move here when that service is converted. The library list's
// visibility and share columns read `content_shares` (ContentService writes it).
// `size_bytes` is BIGINT: PostgresDatabase parses int8 to a number, so a 10 GiB file's size
// comes back as a number on both engines.
import type { ExpressionBuilder } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { DB } from '../../platform/db/schema.js'
import type { MediaRow, MediaUploadPartRow, MediaUploadRow } from './tables.js'
import type { PageRequest } from '../../platform/paging.js'
import { paged } from '../../platform/db/keyset.js'

export interface MediaFilter {
  search?: string | undefined
  kind?: string | undefined
  state?: string | undefined
  /** '' or 'root' = items outside any folder. */
  folderId?: string | undefined
}

/** What the probe writes when it has looked at a file. */
export interface ProbeOutcome {
  state: 'ready' | 'failed'
  failure: string | null
  width: number | null
  height: number | null
  durationMs: number | null
  /** When the thumbnail was made, null without one. */
  thumbnailAt: string | null
}

export class MediaRepository {
  constructor(private readonly k: Executor) {}

  // ---- media ----

  byId(workspaceId: string, id: string): Promise<MediaRow | undefined> {
    return this.k.selectFrom('media').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  /** By id alone: a device holding a signed URL has no workspace. */
  byIdAnyWorkspace(id: string): Promise<MediaRow | undefined> {
    return this.k.selectFrom('media').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /**
   * The library list: `visibleNodes` null = every item of the workspace (not pinned);
   * otherwise items homed at those nodes or shared with one of them.
   */
  private listQuery(workspaceId: string, visibleNodes: string[] | null, f: MediaFilter) {
    let q = this.k.selectFrom('media').where('media.workspace_id', '=', workspaceId)
    if (visibleNodes !== null) {
      if (!visibleNodes.length) q = q.where((eb) => eb.val(1), '=', 0)
      else
        q = q.where((eb) =>
          eb.or([
            eb('media.node_id', 'in', visibleNodes),
            eb(
              'media.id',
              'in',
              eb
                .selectFrom('content_shares')
                .select('content_id')
                .where('workspace_id', '=', workspaceId)
                .where('content_kind', '=', 'media')
                .where('node_id', 'in', visibleNodes),
            ),
          ]),
        )
    }
    if (f.search) q = q.where((eb: ExpressionBuilder<DB, 'media'>) => eb(eb.fn('lower', ['media.name']), 'like', `%${f.search!.toLowerCase()}%`))
    if (f.kind) q = q.where('media.kind', '=', f.kind)
    if (f.state) q = q.where('media.state', '=', f.state)
    if (f.folderId !== undefined) {
      if (f.folderId === '' || f.folderId === 'root') q = q.where('media.folder_id', 'is', null)
      else q = q.where('media.folder_id', '=', f.folderId)
    }
    return q
  }

  list(workspaceId: string, visibleNodes: string[] | null, f: MediaFilter, page: PageRequest): Promise<MediaRow[]> {
    return paged(this.listQuery(workspaceId, visibleNodes, f).selectAll(), page, 'desc').execute()
  }

  async count(workspaceId: string, visibleNodes: string[] | null, f: MediaFilter): Promise<number> {
    const r = await this.listQuery(workspaceId, visibleNodes, f)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** Nodes each item is shared with, oldest share first. */
  async shares(workspaceId: string, ids: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>()
    if (!ids.length) return out
    const rows = await this.k
      .selectFrom('content_shares')
      .select(['content_id', 'node_id'])
      .where('workspace_id', '=', workspaceId)
      .where('content_kind', '=', 'media')
      .where('content_id', 'in', ids)
      .orderBy('created_at')
      .orderBy('node_id')
      .execute()
    for (const x of rows) out.set(x.content_id, [...(out.get(x.content_id) ?? []), x.node_id])
    return out
  }

  async insert(row: MediaRow): Promise<void> {
    await this.k.insertInto('media').values(row).execute()
  }

  async place(workspaceId: string, id: string, set: { name: string; folderId: string | null; nodeId: string | null; at: string }): Promise<void> {
    await this.k
      .updateTable('media')
      .set({ name: set.name, folder_id: set.folderId, node_id: set.nodeId, updated_at: set.at })
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .execute()
  }

  async delete(workspaceId: string, id: string, k: Executor = this.k): Promise<void> {
    await k.deleteFrom('media').where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
  }

  /** Does any item (any workspace) still hold these bytes? */
  /** Items waiting for the probe, in id order. */
  processing(): Promise<MediaRow[]> {
    return this.k.selectFrom('media').selectAll().where('state', '=', 'processing').orderBy('id').execute()
  }

  /** Records the probe's outcome; false when the item was no longer `processing` (deleted, or done by another run). */
  async settleProbe(id: string, o: ProbeOutcome, at: string): Promise<boolean> {
    const r = await this.k
      .updateTable('media')
      .set({
        state: o.state,
        failure_reason: o.failure,
        width: o.width,
        height: o.height,
        duration_ms: o.durationMs,
        thumbnail_at: o.thumbnailAt,
        updated_at: at,
      })
      .where('id', '=', id)
      .where('state', '=', 'processing')
      .executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  // ---- multipart uploads ----

  async insertUpload(row: MediaUploadRow): Promise<void> {
    await this.k.insertInto('media_uploads').values(row).execute()
  }

  upload(workspaceId: string, id: string): Promise<MediaUploadRow | undefined> {
    return this.k.selectFrom('media_uploads').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  parts(uploadId: string): Promise<MediaUploadPartRow[]> {
    return this.k.selectFrom('media_upload_parts').selectAll().where('upload_id', '=', uploadId).orderBy('part_number').execute()
  }

  /** Records a part; the same part number again replaces it. */
  async putPart(row: MediaUploadPartRow): Promise<void> {
    await this.k
      .insertInto('media_upload_parts')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['upload_id', 'part_number']).doUpdateSet((eb) => ({
          size_bytes: eb.ref('excluded.size_bytes'),
          sha256: eb.ref('excluded.sha256'),
          received_at: eb.ref('excluded.received_at'),
        })),
      )
      .execute()
  }

  /** Deletes an upload and its parts' rows (pass a transaction: both go or neither). */
  async deleteUpload(id: string, k: Executor = this.k): Promise<void> {
    await k.deleteFrom('media_upload_parts').where('upload_id', '=', id).execute()
    await k.deleteFrom('media_uploads').where('id', '=', id).execute()
  }

  async expiredUploads(now: string): Promise<string[]> {
    const rows = await this.k.selectFrom('media_uploads').select('id').where('expires_at', '<=', now).orderBy('id').execute()
    return rows.map((r) => r.id)
  }

  // ---- signing key ----

  /** The server secret `name`: `fresh` is kept when none exists yet; every process reads the one that won. */
  async secret(name: string, fresh: string, at: string): Promise<string> {
    await this.k
      .insertInto('server_secrets')
      .values({ name, value: fresh, created_at: at })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute()
    const row = await this.k.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow()
    return row.value
  }
}
