// The media library's files: single-request upload, resumable multipart upload, import
// from a URL, the background probe (processing → ready | failed), listing, edits,
// deletes and the bytes for download. Files live content-addressed in MediaStore;
// locations, sharing, recall and references are ContentService's, shared by all kinds.
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { Type, type Static } from '@sinclair/typebox'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Config } from '../../config.js'
import type { Database } from '../../platform/db/Database.js'
import type { MediaRow, MediaUploadPartRow, MediaUploadRow } from './tables.js'
import { ApiError, isApiError, notFound, validation } from '../../platform/errors.js'
import { actorRef, type Principal } from '../../platform/http/Principal.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import { isUnsafeUrlError, UnsafeUrlError, type OutboundGuard } from '../../platform/net/OutboundGuard.js'
import type { MediaStore, StagedFile } from './MediaStore.js'
import { sniffFile } from './sniff.js'
import { probe } from './probe.js'
import { imageThumbnail, videoThumbnail } from './thumbnail.js'
import { cleanName, type NodeService } from '../nodes/index.js'
import type { ContentAccess } from '../content/index.js'
import type { ContentSharing } from '../content/index.js'
import type { ContentService } from '../content/index.js'
import { MEDIA_KINDS, type MediaKind } from './sniff.js'
import { MediaRepository, type ProbeOutcome } from './MediaRepository.js'

export const MEDIA_STATES = ['processing', 'ready', 'failed'] as const
export type MediaState = (typeof MEDIA_STATES)[number]

/** A media file as the API answers it: the routes' response schema, and MediaView is derived from it. */
export const MediaItem = Type.Object(
  {
    id: Type.String({ description: 'Prefix med_; use with contentKind media.' }),
    spaceId: Type.String({ description: 'Workspace id.' }),
    name: Type.String(),
    kind: StringEnum(MEDIA_KINDS),
    mimeType: Type.String({ description: 'Sniffed from the bytes, not taken from the client.' }),
    sizeBytes: Type.Integer(),
    sha256: Type.String(),
    state: StringEnum(MEDIA_STATES),
    failureReason: Nullable(Type.String()),
    width: Nullable(Type.Integer()),
    height: Nullable(Type.Integer()),
    durationMs: Nullable(Type.Integer()),
    thumbnailUrl: Nullable(
      Type.String({
        description:
          'A small picture of the file (WebP, at most 320 px on its longer side): images, and videos where the cloud has ffmpeg. Null until made, or for other kinds.',
      }),
    ),
    folderId: Nullable(Type.String()),
    nodeId: Nullable(Type.String()),
    sharedWith: Type.Array(Type.String()),
    recalledAt: Nullable(Timestamp),
    recallReason: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: true },
)
export type MediaView = Static<typeof MediaItem>

export interface MediaPlacement {
  name?: string | undefined
  folderId?: string | null | undefined
  nodeId?: string | null | undefined
}

export const UPLOAD_TTL_MS = 24 * 3600_000
export const MAX_PARTS = 10_000

export class MediaService {
  readonly store: MediaStore
  private readonly repo: MediaRepository
  private running: Promise<void> | null = null
  private again = false

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly content: ContentService,
    /** Who may see or change an item, and where it is shared. */
    private readonly access: ContentAccess,
    private readonly sharing: ContentSharing,
    private readonly outbound: OutboundGuard,
    private readonly config: Config,
    private readonly log: { error(obj: unknown, msg: string): void },
    /** The store media shares with screenshots (one per cloud: the media module, domains/media/index.ts). */
    store: MediaStore,
  ) {
    this.store = store
    this.repo = new MediaRepository(db.kysely)
  }

  private view(r: MediaRow, shares: string[]): MediaView {
    return {
      id: r.id,
      spaceId: r.workspace_id,
      name: r.name,
      kind: r.kind as MediaKind,
      mimeType: r.mime_type,
      sizeBytes: r.size_bytes,
      sha256: r.sha256,
      state: r.state as MediaState,
      failureReason: r.failure_reason,
      width: r.width,
      height: r.height,
      durationMs: r.duration_ms,
      thumbnailUrl: r.thumbnail_at ? `/v1/media/${r.id}/thumbnail` : null,
      folderId: r.folder_id,
      nodeId: r.node_id,
      sharedWith: shares,
      recalledAt: r.recalled_at,
      recallReason: r.recall_reason,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }
  }

  async get(p: Principal, id: string): Promise<MediaView> {
    await this.access.requireVisible(p, 'media', id)
    const shares = await this.sharing.listShares(p, 'media', id)
    return this.view(
      (await this.repo.byId(p.workspaceId, id))!,
      shares.map((s) => s.nodeId),
    )
  }

  async list(
    p: Principal,
    page: PageRequest,
    filter: { search?: string | undefined; kind?: string | undefined; state?: string | undefined; folderId?: string | undefined },
  ): Promise<Page<MediaView>> {
    // The same visibility as the content library's: homed within the credential's subtree, or shared into it.
    const visible = await this.nodes.scopeIds(p)
    const total = page.count ? await this.repo.count(p.workspaceId, visible, filter) : undefined
    const rows = await this.repo.list(p.workspaceId, visible, filter, page)
    const shares = await this.repo.shares(
      p.workspaceId,
      rows.map((r) => r.id),
    )
    return pageOf(rows, page, (r) => this.view(r, shares.get(r.id) ?? []), total)
  }

  /** Checks where a new file goes (name, folder, home) before any bytes are kept. */
  private async placement(p: Principal, m: MediaPlacement, fallbackName: string): Promise<{ name: string; folderId: string | null; nodeId: string | null }> {
    const name = cleanName(m.name ?? fallbackName)
    if (m.folderId) await this.access.requireFolder(p, m.folderId)
    const nodeId = await this.nodes.resolveHome(p, m.nodeId)
    return { name, folderId: m.folderId ?? null, nodeId }
  }

  /**
   * Turns staged bytes into a media item: sniffs the type against the allowlist (415
   * unsupported_type otherwise), stores the bytes at their content address, records the
   * item as `processing` and starts the probe. The staged file is gone afterwards either way.
   */
  async createFromStaged(p: Principal, staged: StagedFile, m: MediaPlacement, fallbackName: string): Promise<MediaView> {
    try {
      if (staged.sizeBytes === 0) throw validation('file is empty.')
      const where = await this.placement(p, m, fallbackName)
      const type = await sniffFile(staged.tmpPath)
      if (!type.ok) throw new ApiError('unsupported_type', type.reason)
      const id = this.ids.next('media')
      const now = this.clock.now().toISOString()
      const row = {
        id,
        workspace_id: p.workspaceId,
        name: where.name,
        kind: type.kind,
        mime_type: type.mimeType,
        size_bytes: staged.sizeBytes,
        sha256: staged.sha256,
        state: 'processing',
        failure_reason: null,
        width: null,
        height: null,
        duration_ms: null,
        thumbnail_at: null,
        folder_id: where.folderId,
        node_id: where.nodeId,
        recalled_at: null,
        recall_reason: null,
        recalled_by: null,
        created_by: actorRef(p),
        created_at: now,
        updated_at: now,
      }
      try {
        await this.store.commit(staged, () => this.repo.insert(row))
      } catch (e) {
        // Bytes stored for a row that could not be written go unless another owner holds them.
        await this.store.release(staged.sha256).catch(() => undefined)
        throw e
      }
      this.kick()
      return this.get(p, id)
    } finally {
      await this.store.discard(staged)
    }
  }

  async update(p: Principal, id: string, input: { name?: string; folderId?: string | null; nodeId?: string | null }): Promise<MediaView> {
    const item = await this.access.requireOwned(p, 'media', id)
    const r = item.media!
    const name = input.name !== undefined ? cleanName(input.name) : r.name
    let folderId = r.folder_id
    if (input.folderId !== undefined) {
      if (input.folderId) await this.access.requireFolder(p, input.folderId)
      folderId = input.folderId
    }
    const nodeId = input.nodeId !== undefined ? await this.nodes.resolveHome(p, input.nodeId) : r.node_id
    await this.repo.place(p.workspaceId, id, { name, folderId, nodeId, at: this.clock.now().toISOString() })
    await this.content.changed(p.workspaceId, 'media', id)
    return this.get(p, id)
  }

  /** Refused (409 conflict) while a playlist, schedule, layout or screen uses the file; the bytes go when no item holds them. */
  async remove(p: Principal, id: string): Promise<{ id: string; deleted: true }> {
    const item = await this.access.requireOwned(p, 'media', id)
    await this.content.assertDeletable(p.workspaceId, 'media', id)
    await this.db.transaction(async (tx) => {
      await this.content.forget(tx, p.workspaceId, 'media', id)
      await this.repo.delete(p.workspaceId, id, tx.kysely)
    })
    await this.store.release(item.media!.sha256)
    await this.content.changed(p.workspaceId, 'media', id)
    return { id, deleted: true }
  }

  /** Where the bytes are, for download. */
  async file(p: Principal, id: string): Promise<{ path: string; sizeBytes: number; mimeType: string; sha256: string; name: string }> {
    const item = await this.access.requireVisible(p, 'media', id)
    const m = item.media!
    return { path: this.store.pathOf(m.sha256), sizeBytes: m.size_bytes, mimeType: m.mime_type, sha256: m.sha256, name: m.name }
  }

  /** Where the bytes are, for a device holding a signed URL (checked by the route). Recalled items are not served. */
  async fileForDevice(id: string): Promise<{ path: string; sizeBytes: number; mimeType: string; sha256: string; name: string }> {
    const m = await this.repo.byIdAnyWorkspace(id)
    if (!m || m.recalled_at) throw notFound('No such media item.')
    return { path: this.store.pathOf(m.sha256), sizeBytes: m.size_bytes, mimeType: m.mime_type, sha256: m.sha256, name: m.name }
  }

  // ---- background probe --------------------------------------------------------------

  /** Starts the probe soon (background mode); tests call processPending() themselves. */
  kick(): void {
    if (this.config.mediaProcessing !== 'background') return
    if (this.running) {
      this.again = true
      return
    }
    this.running = (async () => {
      do {
        this.again = false
        await this.processPending().catch((err) => this.log.error({ err }, 'media processing failed'))
      } while (this.again)
    })().finally(() => (this.running = null))
  }

  /** Waits for a background run in progress (shutdown). */
  async idle(): Promise<void> {
    await this.running
  }

  /** Probes every item still `processing`: ready with dimensions/duration, or failed with a reason. Returns how many were done. */
  async processPending(): Promise<number> {
    const rows = await this.repo.processing()
    for (const r of rows) {
      let update: ProbeOutcome
      try {
        const file = this.store.pathOf(r.sha256)
        const res = await probe(file, r.kind as MediaKind, r.mime_type)
        const made = await this.thumbnail(r, file, res.durationMs)
        update = { state: 'ready', failure: null, ...res, thumbnailAt: made ? this.clock.now().toISOString() : null }
      } catch (e) {
        update = { state: 'failed', failure: e instanceof Error ? e.message : String(e), width: null, height: null, durationMs: null, thumbnailAt: null }
      }
      if (await this.repo.settleProbe(r.id, update, this.clock.now().toISOString())) await this.content.changed(r.workspace_id, 'media', r.id)
    }
    return rows.length
  }

  /** Makes the thumbnail of an image or a video; false when there is none (another kind, no ffmpeg, bytes sharp cannot decode). */
  private async thumbnail(r: MediaRow, file: string, durationMs: number | null): Promise<boolean> {
    try {
      const webp = r.kind === 'image' ? await imageThumbnail(file) : r.kind === 'video' ? await videoThumbnail(file, durationMs) : null
      if (!webp) return false
      await this.store.putThumb(r.sha256, webp)
      return true
    } catch (err) {
      this.log.error({ err, mediaId: r.id }, 'media thumbnail could not be made; the item is ready without one')
      return false
    }
  }

  /** The thumbnail of a media item the principal may see (404 when it has none). */
  async thumbnailFile(p: Principal, id: string): Promise<{ path: string; etag: string }> {
    await this.access.requireVisible(p, 'media', id)
    const r = await this.repo.byId(p.workspaceId, id)
    if (!r?.thumbnail_at) throw notFound('This media item has no thumbnail.')
    return { path: this.store.thumbPath(r.sha256), etag: `"${r.sha256}-thumb"` }
  }

  // ---- multipart (resumable) upload --------------------------------------------------

  private uploadView(u: MediaUploadRow, parts: MediaUploadPartRow[]) {
    return {
      id: u.id,
      name: u.name,
      folderId: u.folder_id,
      nodeId: u.node_id,
      partSizeMaxBytes: this.config.mediaPartMaxBytes,
      fileSizeMaxBytes: this.config.mediaFileMaxBytes,
      parts: parts.map((x) => ({ partNumber: x.part_number, sizeBytes: x.size_bytes, sha256: x.sha256, receivedAt: x.received_at })),
      receivedBytes: parts.reduce((n, x) => n + x.size_bytes, 0),
      createdAt: u.created_at,
      expiresAt: u.expires_at,
    }
  }

  async initiateUpload(p: Principal, input: { name: string; folderId?: string | null; nodeId?: string | null }) {
    const where = await this.placement(p, input, input.name)
    const id = this.ids.next('mediaUpload')
    const now = this.clock.now()
    await this.repo.insertUpload({
      id,
      workspace_id: p.workspaceId,
      name: where.name,
      folder_id: where.folderId,
      node_id: where.nodeId,
      created_by: actorRef(p),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + UPLOAD_TTL_MS).toISOString(),
    })
    return this.getUpload(p, id)
  }

  private async uploadRow(p: Principal, id: string): Promise<MediaUploadRow> {
    const u = await this.repo.upload(p.workspaceId, id)
    if (!u || u.expires_at <= this.clock.now().toISOString() || !(await this.nodes.reaches(p, u.node_id)))
      throw notFound('No such upload (it may have expired, completed or been aborted).')
    return u
  }

  async getUpload(p: Principal, id: string) {
    const u = await this.uploadRow(p, id)
    return this.uploadView(u, await this.repo.parts(id))
  }

  /** Stores one part; sending the same part number again replaces it (resume after a broken connection). */
  async putPart(p: Principal, id: string, n: string, body: unknown) {
    await this.uploadRow(p, id)
    const partNumber = /^[0-9]{1,5}$/.test(n) ? Number(n) : NaN
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PARTS) throw validation(`part number must be an integer from 1 to ${MAX_PARTS}.`)
    if (!(body instanceof Readable)) throw new ApiError('unsupported_type', 'Send the part as Content-Type application/octet-stream.')
    const dir = this.store.uploadDir(id)
    const staged = await this.store.stage(body, this.config.mediaPartMaxBytes, path.join(dir, `${partNumber}.tmp-${this.ids.next('mediaUpload')}`))
    if (staged.sizeBytes === 0) {
      await this.store.discard(staged)
      throw validation('the part is empty.')
    }
    await fsp.rename(staged.tmpPath, path.join(dir, String(partNumber)))
    await this.repo.putPart({
      upload_id: id,
      part_number: partNumber,
      size_bytes: staged.sizeBytes,
      sha256: staged.sha256,
      received_at: this.clock.now().toISOString(),
    })
    return { partNumber, sizeBytes: staged.sizeBytes, sha256: staged.sha256 }
  }

  /** Joins parts 1..N (no gaps) into one file and creates the media item. */
  async completeUpload(p: Principal, id: string): Promise<MediaView> {
    const u = await this.uploadRow(p, id)
    const parts = await this.repo.parts(id)
    if (!parts.length) throw validation('No parts have been uploaded.')
    const gap = parts.findIndex((x, i) => x.part_number !== i + 1)
    if (gap >= 0) throw validation(`Part ${gap + 1} is missing; parts must be numbered 1 to N without gaps.`)
    const dir = this.store.uploadDir(id)
    async function* joined(): AsyncIterable<Buffer> {
      for (const x of parts) for await (const chunk of fs.createReadStream(path.join(dir, String(x.part_number)))) yield chunk as Buffer
    }
    const staged = await this.store.stage(joined(), this.config.mediaFileMaxBytes)
    const item = await this.createFromStaged(p, staged, { name: u.name, folderId: u.folder_id, nodeId: u.node_id }, u.name)
    await this.dropUpload(id)
    return item
  }

  async abortUpload(p: Principal, id: string): Promise<{ id: string; aborted: true }> {
    await this.uploadRow(p, id)
    await this.dropUpload(id)
    return { id, aborted: true }
  }

  private async dropUpload(id: string): Promise<void> {
    await this.db.transaction((tx) => this.repo.deleteUpload(id, tx.kysely))
    await this.store.removeUpload(id)
  }

  /** Removes expired, never completed uploads (housekeeping). */
  async purgeExpiredUploads(): Promise<number> {
    const ids = await this.repo.expiredUploads(this.clock.now().toISOString())
    for (const id of ids) await this.dropUpload(id)
    return ids.length
  }

  // ---- import from a URL -------------------------------------------------------------

  /**
   * Fetches a public https URL through the SSRF guard (no redirects, size and time
   * limits). A URL that is not public https answers 400 unsafe_url, as for webhooks.
   */
  async importUrl(p: Principal, input: { url: string } & MediaPlacement): Promise<MediaView> {
    let url: URL
    try {
      url = this.outbound.check(input.url)
    } catch (e) {
      if (e instanceof UnsafeUrlError) throw new ApiError('unsafe_url', `url is not a public https address: ${e.message}.`)
      throw e
    }
    const fallbackName = decodeURIComponent(url.pathname.split('/').filter(Boolean).pop() ?? '') || url.hostname
    await this.placement(p, input, fallbackName)
    // Streamed to a temporary file: the download never sits in memory, and the connection
    // is dropped as soon as it passes the limit.
    const max = this.config.mediaImportMaxBytes
    const tooLarge = () => new ApiError('too_large', `The file at url is over the limit of ${max} bytes.`)
    const fetchError = (e: unknown): ApiError => {
      if (isApiError(e)) return e.code === 'too_large' ? tooLarge() : e
      if (isUnsafeUrlError(e)) return new ApiError('unsafe_url', 'url resolves to an address that is not public.')
      return validation(`url could not be fetched: ${e instanceof Error ? e.message : String(e)}.`)
    }
    const drop = (body: Readable) => {
      body.on('error', () => undefined)
      body.destroy()
    }
    let res: Awaited<ReturnType<OutboundGuard['stream']>>
    try {
      res = await this.outbound.stream(url.toString(), { signal: AbortSignal.timeout(this.config.mediaImportTimeoutMs) })
    } catch (e) {
      throw fetchError(e)
    }
    if (res.status < 200 || res.status > 299) {
      drop(res.body)
      throw validation(`url answered HTTP ${res.status}.`)
    }
    const declared = Number(res.headers['content-length'])
    if (Number.isFinite(declared) && declared > max) {
      drop(res.body)
      throw tooLarge()
    }
    let staged: StagedFile
    try {
      staged = await this.store.stage(res.body, max)
    } catch (e) {
      drop(res.body)
      throw fetchError(e)
    }
    return this.createFromStaged(p, staged, input, fallbackName)
  }
}
