// The device link's view of the content library: adapts ContentService (exists,
// playability, sharing, device descriptions) to the ContentResolver seam, and turns the
// library's descriptions into the MQTT contract's PlayableContent (no nulls: the agent
// validates every field it receives).
import { MAX_TRANSITION_MS, type ContentKind as DeviceKind, type Fit, type LibraryEntry, type PlayableContent, type PlayableItem } from '@svc/shared/mqtt/index'
import type { Schedule } from '@svc/shared/schedule/index'
import type { ContentAccess, ContentPlayback } from '../content/index.js'
import type { ContentRef, ContentResolver, Playability, ScheduleWith } from '../content/index.js'

type Described = Record<string, unknown>

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
const uint = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined)
const fitOf = (v: unknown): Fit | undefined => (v === 'contain' || v === 'cover' ? v : undefined)

function compact<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T
}

/** Signs a media item's download URL for devices; null = keep the plain API path (tests, no signer). */
export type MediaUrlSign = (mediaId: string) => Promise<string>

const isUnplayable = (d: unknown): boolean => !d || (typeof d === 'object' && (d as Described).playable === false)

/**
 * Schedule rules (and the fallback) whose content cannot play are left out, so the
 * device falls through to the next rule or the fallback instead of showing nothing.
 */
function playableSchedule(schedule: Described, contents: Record<string, Described | null>): Schedule {
  const key = (r: unknown) => {
    const ref = (r ?? {}) as { kind?: string; id?: string }
    return `${ref.kind}:${ref.id}`
  }
  const rules = ((schedule.rules as Described[] | undefined) ?? []).filter((r) => !isUnplayable(contents[key(r.content)]))
  const fallback = schedule.fallback && !isUnplayable(contents[key(schedule.fallback)]) ? schedule.fallback : null
  return { ...schedule, rules, fallback } as unknown as Schedule
}

/**
 * A library description → the contract's PlayableContent. Media get a signed download URL
 * when `sign` is given (devices have no API credential), else the plain API path.
 */
export async function toPlayable(d: Described, sign: MediaUrlSign | null = null): Promise<PlayableContent> {
  const urlOf = async (x: Described): Promise<string | undefined> => {
    if (x.kind === 'media' && typeof x.id === 'string' && sign) return sign(x.id)
    return str(x.contentPath)
  }
  const out: PlayableContent = compact({
    name: str(d.name),
    url: await urlOf(d),
    mimeType: str(d.mimeType),
    sha256: str(d.sha256),
    sizeBytes: uint(d.sizeBytes),
    durationMs: uint(d.durationMs),
  })
  if (Array.isArray(d.items)) {
    const items: PlayableItem[] = []
    for (const i of d.items as Described[]) {
      const c = (i.content ?? {}) as Described
      if (c.playable === false) continue
      items.push(
        compact({
          contentKind: i.kind as DeviceKind,
          contentId: String(i.id),
          name: str(c.name),
          url: await urlOf(c),
          mimeType: str(c.mimeType),
          sha256: str(c.sha256),
          sizeBytes: uint(c.sizeBytes),
          durationMs: uint(i.durationMs),
          fit: fitOf(i.fit),
        }) as PlayableItem,
      )
    }
    out.items = items
    // Presentation (player): the playlist's fit and its transition between items.
    const fit = fitOf(d.fit)
    if (fit) out.fit = fit
    if (d.transition === 'fade' || d.transition === 'none') out.transition = d.transition
    const tms = uint(d.transitionMs)
    if (tms !== undefined) out.transitionMs = Math.min(tms, MAX_TRANSITION_MS)
  }
  if (d.kind === 'app') out.config = { appKey: d.appKey, ...((d.config as object) ?? {}) }
  else if (d.kind === 'layout') {
    const zones: Described[] = []
    for (const z of (d.zones as Described[] | undefined) ?? []) {
      const c = z.content as Described | null | undefined
      zones.push({ ...z, content: c && !isUnplayable(c) ? { kind: c.kind, id: c.id, ...(await toPlayable(c, sign)) } : null })
    }
    out.config = { width: d.width, height: d.height, zones }
  } else if (d.kind === 'creative' || d.kind === 'signage') {
    const { kind: _k, id: _i, name: _n, playable: _p, ...rest } = d
    out.config = rest
  }
  if (d.schedule && typeof d.schedule === 'object')
    out.schedule = playableSchedule(d.schedule as Described, (d.contents as Record<string, Described | null>) ?? {})
  return out
}

export class LibraryContentResolver implements ContentResolver {
  constructor(
    /** Where an item may play. */
    private readonly access: Pick<ContentAccess, 'isAvailableAt'>,
    /** Whether it can play, and what a player renders. */
    private readonly library: Pick<ContentPlayback, 'playability' | 'describeForDevice' | 'describeScheduleWith'>,
    private readonly sign: MediaUrlSign | null = null,
  ) {}

  async exists(workspaceId: string, ref: ContentRef): Promise<boolean> {
    return (await this.library.playability(workspaceId, ref.kind, ref.id)).code !== 'not_found'
  }

  async playability(workspaceId: string, ref: ContentRef): Promise<Playability> {
    const p = await this.library.playability(workspaceId, ref.kind, ref.id)
    return p.playable ? { playable: true } : { playable: false, reason: p.reason ?? 'cannot play' }
  }

  isAvailableAt(workspaceId: string, ref: ContentRef, nodeId: string | null): Promise<boolean> {
    return this.access.isAvailableAt(workspaceId, ref.kind, ref.id, nodeId)
  }

  /** Null when the item does not exist or cannot play (recalled, processing, failed, empty): devices never get it. */
  async describeForDevice(workspaceId: string, ref: ContentRef): Promise<PlayableContent | null> {
    const d = await this.library.describeForDevice(workspaceId, ref.kind, ref.id)
    return d && d.playable !== false ? toPlayable(d, this.sign) : null
  }

  async resolveSchedule(workspaceId: string, scheduleId: string): Promise<{ schedule: Schedule; library: LibraryEntry[] } | null> {
    return this.resolved(await this.library.describeForDevice(workspaceId, 'schedule', scheduleId))
  }

  async resolveScheduleWith(workspaceId: string, scheduleId: string, body: Record<string, unknown>): Promise<ScheduleWith | null> {
    const d = await this.library.describeScheduleWith(workspaceId, scheduleId, body)
    const resolved = await this.resolved(d)
    return d && resolved ? { content: await toPlayable(d, this.sign), ...resolved } : null
  }

  private async resolved(d: Described | null): Promise<{ schedule: Schedule; library: LibraryEntry[] } | null> {
    if (!d?.schedule || d.playable === false) return null
    const contents = (d.contents as Record<string, Described | null>) ?? {}
    const library: LibraryEntry[] = []
    for (const [key, desc] of Object.entries(contents)) {
      if (!desc || desc.playable === false) continue
      const [kind, id] = key.split(':') as [string, string]
      library.push({ kind, id, content: await toPlayable(desc, this.sign) })
    }
    return { schedule: playableSchedule(d.schedule as Described, contents), library }
  }
}
