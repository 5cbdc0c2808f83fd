// The device link's view of the content library: adapts ContentService (exists,
// playability, sharing, device descriptions) to the ContentResolver seam, and turns the
// library's descriptions into the MQTT contract's PlayableContent (no nulls: the agent
// validates every field it receives).
import type { ContentKind as DeviceKind, LibraryEntry, PlayableContent, PlayableItem } from '@svc/shared/mqtt/index'
import type { Schedule } from '@svc/shared/schedule/index'
import type { ContentService } from '../services/ContentService.js'
import type { ContentRef, ContentResolver, Playability } from './ContentResolver.js'

type Described = Record<string, unknown>

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
const uint = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined)

function compact<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T
}

/** A library description → the contract's PlayableContent. */
export function toPlayable(d: Described): PlayableContent {
  const out: PlayableContent = compact({
    name: str(d.name),
    url: str(d.contentPath),
    mimeType: str(d.mimeType),
    sha256: str(d.sha256),
    sizeBytes: uint(d.sizeBytes),
    durationMs: uint(d.durationMs),
  })
  if (Array.isArray(d.items)) {
    out.items = (d.items as Described[]).map((i) => {
      const c = (i.content ?? {}) as Described
      return compact({
        contentKind: i.kind as DeviceKind,
        contentId: String(i.id),
        name: str(c.name),
        url: str(c.contentPath),
        mimeType: str(c.mimeType),
        sha256: str(c.sha256),
        sizeBytes: uint(c.sizeBytes),
        durationMs: uint(i.durationMs),
      }) as PlayableItem
    })
  }
  if (d.kind === 'app') out.config = { appKey: d.appKey, ...((d.config as object) ?? {}) }
  else if (d.kind === 'layout') out.config = { width: d.width, height: d.height, zones: d.zones }
  else if (d.kind === 'creative' || d.kind === 'signage') {
    const { kind: _k, id: _i, name: _n, playable: _p, ...rest } = d
    out.config = rest
  }
  if (d.schedule && typeof d.schedule === 'object') out.schedule = d.schedule as Schedule
  return out
}

export class LibraryContentResolver implements ContentResolver {
  constructor(private readonly library: ContentService) {}

  async exists(workspaceId: string, ref: ContentRef): Promise<boolean> {
    return (await this.library.playability(workspaceId, ref.kind, ref.id)).code !== 'not_found'
  }

  async playability(workspaceId: string, ref: ContentRef): Promise<Playability> {
    const p = await this.library.playability(workspaceId, ref.kind, ref.id)
    return p.playable ? { playable: true } : { playable: false, reason: p.reason ?? 'cannot play' }
  }

  isAvailableAt(workspaceId: string, ref: ContentRef, nodeId: string | null): Promise<boolean> {
    return this.library.isAvailableAt(workspaceId, ref.kind, ref.id, nodeId)
  }

  async describeForDevice(workspaceId: string, ref: ContentRef): Promise<PlayableContent | null> {
    const d = await this.library.describeForDevice(workspaceId, ref.kind, ref.id)
    return d ? toPlayable(d) : null
  }

  async resolveSchedule(workspaceId: string, scheduleId: string): Promise<{ schedule: Schedule; library: LibraryEntry[] } | null> {
    const d = await this.library.describeForDevice(workspaceId, 'schedule', scheduleId)
    if (!d || !d.schedule) return null
    const library: LibraryEntry[] = []
    for (const [key, desc] of Object.entries((d.contents as Record<string, Described | null>) ?? {})) {
      if (!desc) continue
      const [kind, id] = key.split(':') as [string, string]
      library.push({ kind, id, content: toPlayable(desc) })
    }
    return { schedule: d.schedule as Schedule, library }
  }
}
