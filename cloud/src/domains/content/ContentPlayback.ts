// Content as a screen sees it: whether an item can play now (and why not), and the JSON
// description a player renders (files by path and sha256, playlists with effective
// durations, schedules with their content, layouts with their zones, apps with config).
import type { ApprovalService } from '../approvals/index.js'
import type { ContentAccess } from './ContentAccess.js'
import type { Playability } from './library.js'
import { type Body, type ContentKind, type ContentRef, KIND_BY_NAME } from './kinds.js'

const DEFAULT_ITEM_MS = 10_000

export class ContentPlayback {
  constructor(
    private readonly access: ContentAccess,
    private readonly approvals: Pick<ApprovalService, 'unapprovedCreation'>,
  ) {}

  /** Whether the item can go on a screen now; the reason (for 422 content_unplayable) when not. */
  async playability(workspaceId: string, kind: ContentKind, id: string, depth = 0): Promise<Playability> {
    const item = await this.access.locate(workspaceId, kind, id)
    if (!item) return { playable: false, code: 'not_found', reason: `${kind} ${id} does not exist.` }
    if (await this.approvals.unapprovedCreation(workspaceId, kind, id))
      return { playable: false, code: 'unapproved', reason: `"${item.name}" is new and not approved yet.` }
    if (kind !== 'media' && !KIND_BY_NAME.get(kind)?.playable)
      return {
        playable: false,
        code: 'not_playable_kind',
        reason: `A ${KIND_BY_NAME.get(kind)?.label.toLowerCase() ?? kind} cannot be put on a screen by itself.`,
      }
    if (item.recalledAt) return { playable: false, code: 'recalled', reason: `"${item.name}" is recalled.` }
    if (item.media) {
      if (item.media.state === 'processing') return { playable: false, code: 'processing', reason: `"${item.name}" is still processing.` }
      if (item.media.state !== 'ready')
        return {
          playable: false,
          code: 'failed',
          reason: `"${item.name}" could not be processed${item.media.failure_reason ? `: ${item.media.failure_reason}` : ''}.`,
        }
      return { playable: true }
    }
    const body = item.body ?? {}
    if (depth > 4) return { playable: true }
    if (kind === 'playlist') {
      const items = (body.items as { kind: ContentKind; id: string }[] | undefined) ?? []
      if (!items.length) return { playable: false, code: 'empty', reason: `Playlist "${item.name}" is empty.` }
      for (const i of items) if ((await this.playability(workspaceId, i.kind, i.id, depth + 1)).playable) return { playable: true }
      return { playable: false, code: 'empty', reason: `No item of playlist "${item.name}" can play (recalled, processing or failed).` }
    }
    if (kind === 'schedule') {
      if (!scheduleCanPlay(body)) return { playable: false, code: 'empty', reason: `Schedule "${item.name}" has no enabled rule and no fallback.` }
      return { playable: true }
    }
    if (kind === 'layout' && !((body.zones as unknown[] | undefined) ?? []).length)
      return { playable: false, code: 'empty', reason: `Layout "${item.name}" has no zones.` }
    return { playable: true }
  }

  /** A schedule's rules and fallback as a player reads them, with the described content they name. */
  private async scheduleParts(body: Body, nested: (ref: ContentRef) => Promise<Record<string, unknown> | null>) {
    const contents: Record<string, unknown> = {}
    const refs = [
      ...((body.rules as { content: ContentRef }[] | undefined) ?? []).map((r) => r.content),
      ...(body.fallback ? [body.fallback as ContentRef] : []),
    ]
    for (const r of refs) contents[`${r.kind}:${r.id}`] ??= await nested(r)
    return { schedule: { timezone: body.timezone ?? undefined, rules: body.rules ?? [], fallback: body.fallback ?? null }, contents }
  }

  /**
   * The schedule's description as describeForDevice would answer it were `body` stored
   * (the timeline preview of an update): the item's own state (recalled, unapproved) as it
   * is, the rules and fallback from `body`. Null when the schedule does not exist.
   */
  async describeScheduleWith(workspaceId: string, id: string, body: Body): Promise<Record<string, unknown> | null> {
    const item = await this.access.locate(workspaceId, 'schedule', id)
    if (!item) return null
    const now = await this.playability(workspaceId, 'schedule', id)
    const playable = (now.playable || now.code === 'empty') && scheduleCanPlay(body)
    return {
      kind: 'schedule',
      id,
      name: item.name,
      playable,
      ...(await this.scheduleParts(body, (ref) => this.describeForDevice(workspaceId, ref.kind, ref.id, 1))),
    }
  }

  /**
   * A JSON description a player can render: files by their download path and sha256
   * (cache key), playlists with each item's effective duration (unplayable items left
   * out), schedules with the described content of every rule, apps with their config.
   * Returns null when the item does not exist.
   */
  async describeForDevice(workspaceId: string, kind: ContentKind, id: string, depth = 0): Promise<Record<string, unknown> | null> {
    const item = await this.access.locate(workspaceId, kind, id)
    if (!item) return null
    const base = { kind, id, name: item.name, playable: (await this.playability(workspaceId, kind, id)).playable }
    if (item.media) {
      const m = item.media
      return {
        ...base,
        mediaKind: m.kind,
        mimeType: m.mime_type,
        sha256: m.sha256,
        sizeBytes: m.size_bytes,
        width: m.width,
        height: m.height,
        durationMs: m.duration_ms,
        contentPath: `/v1/media/${m.id}/content`,
      }
    }
    const body = item.body ?? {}
    const nested = (ref: ContentRef): Promise<Record<string, unknown> | null> =>
      depth >= 4 ? Promise.resolve({ kind: ref.kind, id: ref.id }) : this.describeForDevice(workspaceId, ref.kind, ref.id, depth + 1)
    switch (kind) {
      case 'playlist': {
        const items: Record<string, unknown>[] = []
        for (const i of (body.items as { kind: ContentKind; id: string; durationMs: number | null; fit?: string }[] | undefined) ?? []) {
          const d = await nested(i)
          if (!d || d.playable === false) continue
          const own = typeof d.durationMs === 'number' && (d.mediaKind === 'video' || d.mediaKind === 'audio' || d.kind === 'creative') ? d.durationMs : null
          items.push({ kind: i.kind, id: i.id, durationMs: i.durationMs ?? own ?? DEFAULT_ITEM_MS, ...(i.fit ? { fit: i.fit } : {}), content: d })
        }
        // Presentation for the player: fit (the playlist's, an item's own wins) and transition.
        return { ...base, items, fit: body.fit ?? null, transition: body.transition ?? null, transitionMs: body.transitionMs ?? null }
      }
      case 'schedule':
        return { ...base, ...(await this.scheduleParts(body, nested)) }
      case 'layout': {
        const zones: Record<string, unknown>[] = []
        for (const z of (body.zones as (Body & { content: ContentRef | null })[] | undefined) ?? [])
          zones.push({ ...z, content: z.content ? await nested(z.content) : null })
        return { ...base, width: body.width, height: body.height, zones }
      }
      case 'app':
        return { ...base, appKey: body.appKey, config: body.config }
      default:
        return { ...base, ...body }
    }
  }
}

/** A schedule can play when it has an enabled rule or a fallback. */
function scheduleCanPlay(body: Body): boolean {
  const rules = (body.rules as { enabled?: boolean }[] | undefined) ?? []
  return Boolean(body.fallback) || rules.some((r) => r.enabled !== false)
}
