// Kept pages of the screen list: dashboards and integrations poll `GET /v1/screens` far
// more often than a quiet fleet changes, and building a page is most of the list's cost.
// A page is kept as the JSON text answered, under everything that chose it (workspace,
// the node ids the credential reaches, cursor, limit, count), until a committed write
// makes it stale (platform/db/changes.ts): a change to a workspace's set of screens (pairing,
// delete, rename or move, assignment) drops all of that workspace's pages, a change to
// some screens' listed fields (presence, last seen) drops the pages holding them. So one
// instance answers exactly what the database holds. Instances of one cloud pass their
// changes to each other through Redis (platform/cluster/RedisDataChanges.ts); a page is kept at
// most SVC_SCREEN_LIST_KEEP_MS (5 s), which bounds how stale it can be while Redis is away.
import type { Clock } from '../../platform/clock.js'
import type { DataChange } from '../../platform/db/changes.js'

/** Bound on what the kept pages hold (UTF-16 code units of their text, ids included). */
const MAX_UNITS = 8 * 1024 * 1024

interface Page {
  text: string
  workspaceId: string
  screenIds: readonly string[]
  units: number
  until: number
}

function addTo(index: Map<string, Set<string>>, at: string, key: string): void {
  let keys = index.get(at)
  if (!keys) index.set(at, (keys = new Set()))
  keys.add(key)
}

function removeFrom(index: Map<string, Set<string>>, at: string, key: string): void {
  const keys = index.get(at)
  if (!keys) return
  keys.delete(key)
  if (!keys.size) index.delete(at)
}

export class ScreenListCache {
  private readonly pages = new Map<string, Page>()
  private readonly byWorkspace = new Map<string, Set<string>>()
  private readonly byScreen = new Map<string, Set<string>>()
  /** Bumped by every change: a page read before one is not kept (its snapshot may predate it). */
  private epoch = 0
  private units = 0

  constructor(
    private readonly clock: Clock,
    /** How long a page is kept at most, ms; 0 = none is kept. */
    private readonly keepMs: number,
    private readonly maxUnits = MAX_UNITS,
  ) {}

  /** The page's kept text, if any. */
  get(key: string): string | undefined {
    const page = this.pages.get(key)
    if (!page) return undefined
    if (this.clock.now().getTime() < page.until) return page.text
    this.remove(key)
    return undefined
  }

  /** Taken before the database read whose answer `keep` stores. */
  begin(): number {
    return this.epoch
  }

  /** Keeps a page read since `begin` answered `epoch`, unless a change came in between. */
  keep(epoch: number, key: string, workspaceId: string, screenIds: readonly string[], text: string): void {
    if (this.keepMs <= 0 || epoch !== this.epoch) return
    this.remove(key)
    let units = text.length + key.length
    for (const id of screenIds) units += id.length
    if (units > this.maxUnits) return
    // The oldest pages go first.
    for (const oldest of this.pages.keys()) {
      if (this.units + units <= this.maxUnits) break
      this.remove(oldest)
    }
    this.pages.set(key, { text, workspaceId, screenIds, units, until: this.clock.now().getTime() + this.keepMs })
    this.units += units
    addTo(this.byWorkspace, workspaceId, key)
    for (const id of screenIds) addTo(this.byScreen, id, key)
  }

  /** Drops the pages `change` makes stale. */
  drop(change: DataChange): void {
    this.epoch++
    if (!this.pages.size) return
    if (change.kind === 'workspaceScreens') {
      for (const key of [...(this.byWorkspace.get(change.workspaceId) ?? [])]) this.remove(key)
    } else {
      for (const id of change.screenIds) for (const key of [...(this.byScreen.get(id) ?? [])]) this.remove(key)
    }
  }

  /** How many pages are kept (tests). */
  get size(): number {
    return this.pages.size
  }

  private remove(key: string): void {
    const page = this.pages.get(key)
    if (!page) return
    this.pages.delete(key)
    this.units -= page.units
    removeFrom(this.byWorkspace, page.workspaceId, key)
    for (const id of page.screenIds) removeFrom(this.byScreen, id, key)
  }
}
