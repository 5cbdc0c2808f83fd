// Test double for the content library seam: content registered by hand, with an
// optional processing state and the nodes it is shared to. Not used by the product.
import type { LibraryEntry, PlayableContent } from '@svc/shared/mqtt/index'
import type { Schedule } from '@svc/shared/schedule/index'
import type { ContentRef, ContentResolver, Playability } from '../index.js'

interface Entry {
  workspaceId: string
  content: PlayableContent
  unplayable: string | null
  /** Nodes whose subtree may play it; null = everywhere in the workspace. */
  sharedTo: (string | null)[] | null
  schedule?: { schedule: Schedule; library: LibraryEntry[] }
}

export class InMemoryContentResolver implements ContentResolver {
  private readonly entries = new Map<string, Entry>()
  /** Answers isAvailableAt for a screen at `nodeId` given the nodes content is shared to. */
  constructor(
    private readonly within: (workspaceId: string, nodeId: string | null, ancestor: string | null) => Promise<boolean> = async (_w, n, a) =>
      a === null || n === a,
  ) {}

  /** Every id of every kind exists and plays everywhere (for sweeps that only need some content). */
  static permissive(): InMemoryContentResolver {
    const r = new InMemoryContentResolver()
    r.permissive = true
    return r
  }
  private permissive = false

  private key(workspaceId: string, ref: ContentRef): string {
    const k = `${workspaceId}/${ref.kind}/${ref.id}`
    if (this.permissive && !this.entries.has(k)) this.entries.set(k, { workspaceId, content: { name: ref.id }, unplayable: null, sharedTo: null })
    return k
  }

  add(workspaceId: string, ref: ContentRef, opts: Partial<Omit<Entry, 'workspaceId'>> = {}): this {
    this.entries.set(this.key(workspaceId, ref), {
      workspaceId,
      content: opts.content ?? { name: ref.id, url: `https://cdn.example/${ref.id}` },
      unplayable: opts.unplayable ?? null,
      sharedTo: opts.sharedTo ?? null,
      ...(opts.schedule ? { schedule: opts.schedule } : {}),
    })
    return this
  }

  async exists(workspaceId: string, ref: ContentRef): Promise<boolean> {
    return this.entries.has(this.key(workspaceId, ref))
  }
  async playability(workspaceId: string, ref: ContentRef): Promise<Playability> {
    const e = this.entries.get(this.key(workspaceId, ref))
    if (!e) return { playable: false, reason: 'unknown content' }
    return e.unplayable ? { playable: false, reason: e.unplayable } : { playable: true }
  }
  async isAvailableAt(workspaceId: string, ref: ContentRef, nodeId: string | null): Promise<boolean> {
    const e = this.entries.get(this.key(workspaceId, ref))
    if (!e) return false
    if (e.sharedTo === null) return true
    for (const n of e.sharedTo) if (await this.within(workspaceId, nodeId, n)) return true
    return false
  }
  async describeForDevice(workspaceId: string, ref: ContentRef): Promise<PlayableContent | null> {
    return this.entries.get(this.key(workspaceId, ref))?.content ?? null
  }
  async resolveSchedule(workspaceId: string, scheduleId: string): Promise<{ schedule: Schedule; library: LibraryEntry[] } | null> {
    return this.entries.get(this.key(workspaceId, { kind: 'schedule', id: scheduleId }))?.schedule ?? null
  }
}
