// Screenshots: `POST /v1/screens/<id>/screenshot` queues a `screenshot` job for the screen
// (delivered on its jobs topic, see domains/screenshots/ScreenshotJobDelivery.ts); the agent captures
// its own player page and PUTs the PNG to the job's `uploadUrl`
// (`/v1/devices/screenshots/<id>`), authenticated with its device credential (HTTP Basic,
// screen id : device secret, the same pair it uses for MQTT). The bytes are checked (a whole
// PNG, chunk by chunk to its IEND: domains/media/png.ts; at most SCREENSHOT_MAX_BYTES) and kept in the media store
// by sha256. The agent's job result closes a job it could not do (`failed` + reason); one
// without any answer within SCREENSHOT_TTL_MS fails as `expired`. Rows and their files go
// after SCREENSHOT_RETENTION_DAYS (housekeeper). Each image gets a thumbnail (the media
// thumbnail: WebP, at most 320 px on its longer side, beside the media thumbnails in the store,
// by the same sha256) made after the upload answered, or on its first GET where it is missing
// (screenshots from before thumbnails): the screens table and grid show those, a few dozen KiB
// each, not the multi-MiB PNG.
import { existsSync } from 'node:fs'
import type { Readable } from 'node:stream'
import { Type, type Static } from '@sinclair/typebox'
import { SCREENSHOT_MAX_BYTES as SHARED_SCREENSHOT_MAX_BYTES, type JobResult, type ScreenshotJob } from '@svc/shared/mqtt/index'
import type { Principal } from '../../platform/http/Principal.js'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import { type Hook, Listeners } from '../../platform/hooks.js'
import type { Database } from '../../platform/db/Database.js'
import { ApiError, notFound } from '../../platform/errors.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import type { MediaStore } from '../media/index.js'
import { checkPng, imageThumbnail } from '../media/index.js'
import { ScreenshotRepository, type ScreenshotRow } from './ScreenshotRepository.js'
import { deviceScreen, type ScreenService } from '../screens/index.js'
import { SharedSweep } from '../serial/index.js'

/** Largest PNG a device may upload (a 4K frame of photos compresses well under this). */
export const SCREENSHOT_MAX_BYTES = SHARED_SCREENSHOT_MAX_BYTES
/** A job without an upload or a result after this long fails as `expired`. */
export const SCREENSHOT_TTL_MS = 10 * 60_000
/** Screenshots (rows and files) are deleted this many days after they were asked for. */
export const SCREENSHOT_RETENTION_DAYS = 30
const REASON_CHARS = 500

export const SCREENSHOT_STATUSES = ['queued', 'sent', 'ok', 'failed'] as const
/** What the image shows: the display's output as the compositor shows it, or the player page rendered apart. */
export const SCREENSHOT_SOURCES = ['display', 'page'] as const
export type ScreenshotSource = (typeof SCREENSHOT_SOURCES)[number]
export type ScreenshotStatus = (typeof SCREENSHOT_STATUSES)[number]

/** A screenshot job as the API answers it: the routes' response schema, and ScreenshotView is derived from it. */
export const Screenshot = Type.Object({
  id: Type.String({ description: 'Prefix `shot_`.' }),
  screenId: Type.String(),
  status: StringEnum(SCREENSHOT_STATUSES, {
    description: '`queued` until the screen holds the job, `sent`, then `ok` (image uploaded) or `failed` (see reason).',
  }),
  reason: Nullable(
    Type.String({
      description: `Why it failed: the agent's reason (e.g. no browser on the player), or \`expired\` when nothing came back within ${SCREENSHOT_TTL_MS / 60_000} minutes.`,
    }),
  ),
  imageUrl: Nullable(Type.String({ description: 'Path of the PNG (GET it with the same credential) once `ok`.' })),
  thumbnailUrl: Nullable(
    Type.String({ description: 'Path of a small picture of it (image/webp, at most 320 px on its longer side; GET it with the same credential) once `ok`.' }),
  ),
  mimeType: Nullable(Type.Literal('image/png')),
  width: Nullable(Type.Integer()),
  height: Nullable(Type.Integer()),
  sizeBytes: Nullable(Type.Integer()),
  source: Nullable(
    StringEnum(SCREENSHOT_SOURCES, {
      description:
        "What the image shows, once `ok`: `display` = the player's screen output as its compositor shows it (whatever is on the glass, the player page or not); `page` = the player page rendered in a browser of its own (the player has no compositor or no capture tool).",
    }),
  ),
  createdAt: Timestamp,
  sentAt: Nullable(Timestamp),
  completedAt: Nullable(Timestamp),
})
export type ScreenshotView = Static<typeof Screenshot>

const view = (r: ScreenshotRow): ScreenshotView => ({
  id: r.id,
  screenId: r.screen_id,
  status: r.status as ScreenshotStatus,
  reason: r.reason,
  imageUrl: r.status === 'ok' ? `/v1/screenshots/${r.id}/image` : null,
  thumbnailUrl: r.status === 'ok' ? `/v1/screenshots/${r.id}/thumbnail` : null,
  mimeType: r.status === 'ok' ? 'image/png' : null,
  width: r.width,
  height: r.height,
  sizeBytes: r.size_bytes === null ? null : Number(r.size_bytes),
  // Agents from before the display capture upload no source: they rendered the page.
  source: r.status === 'ok' ? (r.source === 'display' ? 'display' : 'page') : null,
  createdAt: r.created_at,
  sentAt: r.sent_at,
  completedAt: r.completed_at,
})

export class ScreenshotService {
  private readonly repo: ScreenshotRepository
  /** The expiry sweep before a connection's re-send, shared by connections arriving together. */
  private readonly connectSweep: SharedSweep
  /** Thumbnails being made, by the PNG's sha256 (callers for the same bytes share one run). */
  private readonly making = new Map<string, Promise<boolean>>()
  private readonly queuedJobs = new Listeners<(screenId: string) => void>()
  /** Jobs were queued for a screen (after they committed): its delivery (devicelink's JobDelivery) joins this when it is built. */
  readonly queued: Hook<(screenId: string) => void> = this.queuedJobs

  private tellQueued(screenId: string): void {
    for (const l of this.queuedJobs.all()) l(screenId)
  }

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly screens: ScreenService,
    private readonly store: MediaStore,
    /** Base URL put in front of the upload path (SVC_PUBLIC_URL); null = a path the agent resolves against its cloud. */
    private readonly publicUrl: string | null = null,
  ) {
    this.repo = new ScreenshotRepository(db.kysely)
    this.connectSweep = new SharedSweep(clock, () => this.expireStale())
  }

  private now(): string {
    return this.clock.now().toISOString()
  }

  /** Queues a screenshot of the screen; delivered now if it is connected, else when it connects. */
  async request(p: Principal, screenId: string): Promise<ScreenshotView> {
    const screen = await this.screens.get(p, screenId)
    const row: ScreenshotRow = {
      id: this.ids.next('screenshot'),
      workspace_id: p.workspaceId,
      screen_id: screen.id,
      status: 'queued',
      reason: null,
      sha256: null,
      size_bytes: null,
      width: null,
      height: null,
      source: null,
      created_at: this.now(),
      sent_at: null,
      completed_at: null,
    }
    await this.repo.insert(row)
    this.tellQueued(screen.id)
    return view(row)
  }

  private async owned(p: Principal, id: string): Promise<ScreenshotRow> {
    const row = await this.repo.byId(id)
    if (!row || row.workspace_id !== p.workspaceId) throw notFound('No such screenshot.')
    try {
      await this.screens.get(p, row.screen_id) // the screen's location must be within reach
    } catch (e) {
      if ((e as { code?: string }).code === 'not_found') throw notFound('No such screenshot.')
      throw e
    }
    await this.expireStale()
    return (await this.repo.byId(id)) ?? row
  }

  async get(p: Principal, id: string): Promise<ScreenshotView> {
    return view(await this.owned(p, id))
  }

  /** The PNG of a finished screenshot: the file path and size. */
  /** The PNG's bytes; 409 while the job is not `ok`, 404 when the stored file is missing. */
  async image(p: Principal, id: string): Promise<{ stream: Readable; sizeBytes: number }> {
    const row = await this.owned(p, id)
    if (row.status !== 'ok' || !row.sha256)
      throw new ApiError('conflict', `The screenshot is ${row.status}${row.reason ? ` (${row.reason})` : ''}; there is no image.`)
    return { stream: await this.store.read(row.sha256), sizeBytes: Number(row.size_bytes) }
  }

  /**
   * The thumbnail of a finished screenshot: where it is and its ETag; made now when it is
   * missing. 409 while the job is not `ok`; 404 when the stored PNG is gone or cannot be read.
   */
  async thumbnail(p: Principal, id: string): Promise<{ path: string; etag: string }> {
    const row = await this.owned(p, id)
    if (row.status !== 'ok' || !row.sha256)
      throw new ApiError('conflict', `The screenshot is ${row.status}${row.reason ? ` (${row.reason})` : ''}; there is no image.`)
    const path = this.store.thumbPath(row.sha256)
    if (!existsSync(path) && !(await this.makeThumbnail(row.sha256))) throw notFound('No thumbnail could be made of this screenshot; its image may be missing.')
    return { path, etag: `"${row.sha256}-thumb"` }
  }

  /** Makes and keeps the thumbnail of the stored PNG `sha256` (once for callers arriving together); false when it cannot. */
  private makeThumbnail(sha256: string): Promise<boolean> {
    let run = this.making.get(sha256)
    if (!run) {
      run = (async () => {
        try {
          await this.store.putThumb(sha256, await imageThumbnail(this.store.pathOf(sha256)))
          return true
        } catch {
          return false
        }
      })().finally(() => this.making.delete(sha256))
      this.making.set(sha256, run)
    }
    return run
  }

  /** Waits for the thumbnails being made (shutdown). */
  async idle(): Promise<void> {
    while (this.making.size > 0) await Promise.all([...this.making.values()])
  }

  /** Jobs of a screen without a result, as the MQTT job message. */
  async pendingFor(screenId: string): Promise<ScreenshotJob[]> {
    // Shared by the connections arriving together (a connect storm); the read leaves out what crossed its TTL since.
    await this.connectSweep.run()
    const cutoff = new Date(this.clock.now().getTime() - SCREENSHOT_TTL_MS).toISOString()
    return (await this.repo.openFor(screenId, cutoff)).map((r) => this.jobMessage(r))
  }

  /** pendingFor for several screens at once: one sweep, one read per 500 screens (connections arriving together). */
  async pendingForMany(screenIds: readonly string[]): Promise<Map<string, ScreenshotJob[]>> {
    await this.connectSweep.run()
    const cutoff = new Date(this.clock.now().getTime() - SCREENSHOT_TTL_MS).toISOString()
    const rows = await this.repo.openForMany(screenIds, cutoff)
    return new Map([...rows].map(([id, list]) => [id, list.map((r) => this.jobMessage(r))]))
  }

  private jobMessage(r: { id: string; created_at: string }): ScreenshotJob {
    const base = this.publicUrl ? this.publicUrl.replace(/\/+$/, '') : ''
    return { id: r.id, kind: 'screenshot' as const, uploadUrl: `${base}/v1/devices/screenshots/${r.id}`, createdAt: r.created_at }
  }

  markSent(id: string): Promise<void> {
    return this.repo.markSent(id, this.now())
  }

  /** A job result from the screen: a failure closes the job with its reason; `ok` without an upload is a failure too. */
  async applyResult(screenId: string, r: JobResult): Promise<void> {
    const row = await this.repo.byId(r.jobId)
    if (!row || row.screen_id !== screenId) return
    if (row.status !== 'queued' && row.status !== 'sent') return
    const reason = r.outcome === 'ok' ? 'the screen reported success but uploaded no image' : (r.reason ?? `screenshot ${r.outcome}`)
    await this.repo.complete(row.id, { status: 'failed', reason: reason.slice(0, REASON_CHARS), completed_at: this.now() })
  }

  /** Open jobs past their TTL fail as `expired`. */
  async expireStale(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - SCREENSHOT_TTL_MS).toISOString()
    return this.repo.expireOpen(cutoff, 'expired', this.now())
  }

  /**
   * The device's upload: `authorization` must be Basic screenId:deviceSecret of the screen
   * the job is for; the body a PNG of at most SCREENSHOT_MAX_BYTES. Closes the job `ok`,
   * recording what the image shows (`source`; an agent that names none rendered the page).
   */
  async upload(id: string, authorization: string | undefined, body: Readable, source: ScreenshotSource = 'page'): Promise<ScreenshotView> {
    const screenId = await deviceScreen(this.db, authorization)
    const row = await this.repo.byId(id)
    if (!row || !screenId || row.screen_id !== screenId)
      throw new ApiError('invalid_credentials', 'The device credential does not match the screen this screenshot is for.')
    await this.expireStale()
    const current = (await this.repo.byId(id))!
    if (current.status !== 'queued' && current.status !== 'sent')
      throw new ApiError('conflict', `The screenshot is already ${current.status}${current.reason ? ` (${current.reason})` : ''}.`)
    const staged = await this.store.stage(body, SCREENSHOT_MAX_BYTES)
    let closed = false
    let committed = false
    try {
      const png = await checkPng(staged.tmpPath)
      if (!png.ok) throw new ApiError('unsupported_type', `The body is not a PNG image: ${png.reason}`)
      const size = { width: png.width, height: png.height }
      committed = true
      closed = await this.store.commit(staged, () =>
        this.repo.complete(id, {
          status: 'ok',
          reason: null,
          completed_at: this.now(),
          sha256: staged.sha256,
          size_bytes: staged.sizeBytes,
          width: size.width,
          height: size.height,
          source,
        }),
      )
      if (!closed) throw new ApiError('conflict', 'The screenshot was closed while the image was uploading.')
      // Not awaited by the upload (a failure leaves it to the first GET of the thumbnail).
      const sha256 = staged.sha256
      setImmediate(() => void this.makeThumbnail(sha256))
      return view((await this.repo.byId(id))!)
    } finally {
      await this.store.discard(staged)
      // Bytes kept for a job that did not take them go, unless another owner holds them.
      if (committed && !closed) await this.store.release(staged.sha256)
    }
  }

  /** Deletes screenshots asked for more than SCREENSHOT_RETENTION_DAYS ago, and files nothing else holds. */
  async purgeOld(): Promise<number> {
    await this.expireStale()
    const cutoff = new Date(this.clock.now().getTime() - SCREENSHOT_RETENTION_DAYS * 86_400_000).toISOString()
    const hashes = await this.repo.deleteBefore(cutoff)
    for (const h of hashes) await this.store.release(h)
    return hashes.length
  }
}
