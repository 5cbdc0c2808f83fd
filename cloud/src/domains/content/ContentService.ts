// The content library apart from file handling: every kind in content/kinds.ts (CRUD,
// search, paging), and what all kinds share, media included — home location and
// explicit sharing, availability at a screen's node, references between items (which
// block deletes), recall/restore with their events, playability, the description a
// player renders, and change hooks for the device link.
import { Listeners } from '../../platform/hooks.js'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database, Queryable } from '../../platform/db/Database.js'
import { ContentRepository, type ContentItemRow, type MediaRow } from './ContentRepository.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import { actorRef, type Principal } from '../../platform/http/Principal.js'
import type { EventOutbox } from '../events/EventOutbox.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import { cleanName, type NodeService } from '../nodes/NodeService.js'
import type { ApprovalService, Change, PendingMark } from '../approvals/ApprovalService.js'
import { KIND_BY_NAME, RECALLABLE, type Body, type ContentKind, type ContentRef, type KindDef, type PrepareContext } from './kinds.js'
import type { EventData } from '../events/payloads.js'

type ItemRow = ContentItemRow
/** A media row as the library reads it (MediaService owns the table's writes). */
export type MediaRowLite = MediaRow

/** Any content item, whatever its table. */
export interface Located {
  kind: ContentKind
  id: string
  workspaceId: string
  name: string
  nodeId: string | null
  recalledAt: string | null
  recallReason: string | null
  media?: MediaRowLite
  body?: Body
}

export type ContentView = Record<string, unknown> & {
  id: string
  name: string
  nodeId: string | null
  sharedWith: string[]
  createdAt: string
  updatedAt: string
}

export interface Playability {
  playable: boolean
  /** Stable code when not playable: not_found, not_playable_kind, recalled, processing, failed, empty. */
  code?: string
  /** Human reason, fit for the message of a 422 content_unplayable. */
  reason?: string
}

export type ContentChangeListener = (workspaceId: string, kind: ContentKind, id: string) => Promise<void> | void
/** Something outside the library that uses content (screen assignments, casts) and blocks its deletion. */
export type ContentUsage = (workspaceId: string, kind: ContentKind, id: string) => Promise<{ what: string; count: number } | null>

const DEFAULT_ITEM_MS = 10_000

/** The kinds a recall or restore event names (only they can be recalled: RECALLABLE). */
type RecallableKind = EventData['content.recalled']['kind']

export class ContentService {
  private readonly repo: ContentRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly log: { error(obj: unknown, msg: string): void },
    /** Domain events of content (recall, restore) are recorded here, in the change's transaction. */
    private readonly outbox: EventOutbox,
    /** Changes to content homed where approval is required are held by these approvals. */
    private readonly approvals: ApprovalService,
    /** What uses content (other domains add to it while they are wired): deleting used content is refused. */
    private readonly usage: Listeners<ContentUsage> = new Listeners(),
    /** Told after an item is updated, recalled, restored, shared, unshared or deleted. */
    private readonly listeners: Listeners<ContentChangeListener> = new Listeners(),
  ) {
    this.repo = new ContentRepository(db.kysely)
  }

  /** `{state: 'pending', requestId}` while a change of the item awaits approval, else null. */
  async approvalOf(workspaceId: string, kind: ContentKind, id: string): Promise<PendingMark | null> {
    return this.approvals.pendingMark(workspaceId, kind, id)
  }

  async changed(workspaceId: string, kind: ContentKind, id: string): Promise<void> {
    for (const l of this.listeners.all()) {
      try {
        await l(workspaceId, kind, id)
      } catch (err) {
        this.log.error({ err, kind, id }, 'content change listener failed')
      }
    }
  }

  // ---- visibility --------------------------------------------------------------------

  /** SQL keeping rows (of `kind`) whose home the credential reaches or that are shared into its subtree. */
  async visibleClause(p: Principal, kind: ContentKind, table: string): Promise<{ sql: string; params: string[] }> {
    return ContentRepository.visibleSql(p.workspaceId, kind, table, await this.scopeIds(p))
  }

  private async scopeIds(p: Principal): Promise<string[] | null> {
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

  private async sharedNodes(workspaceId: string, kind: ContentKind, id: string): Promise<string[]> {
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

  // ---- generic kinds -----------------------------------------------------------------

  private itemView(def: KindDef, r: ItemRow, shares: string[]): ContentView {
    const body = JSON.parse(r.body) as Body
    const view: ContentView = {
      id: r.id,
      spaceId: r.workspace_id,
      name: r.name,
      ...(def.viewDefaults ?? {}),
      ...body,
      nodeId: r.node_id,
      sharedWith: shares,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }
    if (def.recallable) {
      view.recalledAt = r.recalled_at
      view.recallReason = r.recall_reason
    }
    return view
  }

  private prepareContext(p: Principal, selfId: string | null): PrepareContext {
    return {
      selfId,
      requireRef: async (ref, field) => {
        const item = ref.kind === 'media' || KIND_BY_NAME.has(ref.kind) ? await this.locate(p.workspaceId, ref.kind, ref.id) : undefined
        if (!item || !(await this.canSee(p, item)))
          throw validation(`${field}: ${ref.kind} ${JSON.stringify(ref.id)} does not exist in this workspace or is out of reach.`)
      },
      requireFolder: async (id, field) => {
        await this.requireFolder(p, id, field)
      },
      folderLineage: async (id) => {
        const out: string[] = []
        let cur: string | null = id
        while (cur && out.length < 64) {
          out.push(cur)
          const row: ItemRow | undefined = await this.repo.itemById(p.workspaceId, cur, 'folder')
          cur = row ? ((JSON.parse(row.body) as Body).parentId as string | null) : null
        }
        return out
      },
    }
  }

  /** 422 invalid_folder unless `id` is a media folder of the workspace the credential can see. */
  async requireFolder(p: Principal, id: string, field = 'folderId'): Promise<void> {
    const f = await this.locate(p.workspaceId, 'folder', id)
    if (!f || !(await this.canSee(p, f))) throw new ApiError('invalid_folder', `${field}: ${JSON.stringify(id)} is not a media folder in this workspace.`)
  }

  async list(def: KindDef, p: Principal, page: PageRequest, filter: { search?: string | undefined }): Promise<Page<ContentView>> {
    const f = { kind: def.kind, scopeIds: await this.scopeIds(p), search: filter.search }
    const total = page.count ? await this.repo.count(p.workspaceId, f) : undefined
    const rows = await this.repo.list(p.workspaceId, f, page)
    const shares = await this.repo.sharesOf(
      p.workspaceId,
      def.kind,
      rows.map((r) => r.id),
    )
    return pageOf(rows, page, (r) => this.itemView(def, r, shares.get(r.id) ?? []), total)
  }

  async get(def: KindDef, p: Principal, id: string): Promise<ContentView> {
    await this.requireVisible(p, def.kind, id)
    const r = (await this.repo.itemById(p.workspaceId, id))!
    const view = this.itemView(def, r, await this.sharedNodes(p.workspaceId, def.kind, id))
    const approval = await this.approvalOf(p.workspaceId, def.kind, id)
    return approval ? { ...view, approval } : view
  }

  async create(def: KindDef, p: Principal, input: Body & { name: string; nodeId?: string | null }): Promise<ContentView> {
    const name = cleanName(input.name)
    const nodeId = await this.nodes.resolveHome(p, input.nodeId)
    for (const k of def.required ?? []) if (input[k] === undefined || input[k] === null) throw validation(`body: ${k} is required.`)
    const id = this.ids.next(def.idKind)
    const { body, refs } = await def.prepare(this.prepareContext(p, null), pick(def, input), null)
    const now = this.clock.now().toISOString()
    const gate = (await this.approvals.gate(p, def.kind, nodeId)) ?? null
    await this.db.transaction(async (tx) => {
      const row = { id, workspace_id: p.workspaceId, kind: def.kind, name, node_id: nodeId, body: JSON.stringify(body), created_at: now, updated_at: now }
      await this.repo.insertItem({ ...row, recalled_at: null, recall_reason: null, recalled_by: null }, tx.kysely)
      await this.repo.writeRefs(p.workspaceId, def.kind, id, refs, tx.kysely)
      if (gate) await this.approvals.open(tx, p, gate, { kind: def.kind, id, name, action: 'create', proposal: null, changes: createdChanges(def, name) })
    })
    if (gate) this.approvals.dispatched()
    return this.get(def, p, id)
  }

  async update(def: KindDef, p: Principal, id: string, input: Body & { name?: string; nodeId?: string | null }): Promise<ContentView> {
    const item = await this.requireOwned(p, def.kind, id)
    const name = input.name !== undefined ? cleanName(input.name) : item.name
    const nodeId = input.nodeId !== undefined ? await this.nodes.resolveHome(p, input.nodeId) : item.nodeId
    const current = item.body ?? {}
    const { body, refs } = await def.prepare(this.prepareContext(p, id), { ...current, ...pick(def, input) }, current)
    const held = await this.holdUpdate(def, p, item, { name, nodeId, body, refs })
    if (held) return held
    await this.db.transaction(async (tx) => {
      const patch = { name, node_id: nodeId, body: JSON.stringify(body), updated_at: this.clock.now().toISOString() }
      await this.repo.updateItem(p.workspaceId, id, patch, tx.kysely)
      await this.repo.writeRefs(p.workspaceId, def.kind, id, refs, tx.kysely)
    })
    await this.changed(p.workspaceId, def.kind, id)
    return this.get(def, p, id)
  }

  /**
   * Holds an update when the item's home (or its new home) requires approval for this
   * credential: the item stays as it is and the request keeps the new version. An item
   * whose creation awaits approval is not playing anywhere, so it changes at once and its
   * request follows. Null when the update goes live now.
   */
  private async holdUpdate(def: KindDef, p: Principal, item: Located, next: HeldVersion): Promise<ContentView | null> {
    const approvals = this.approvals
    const creation = await approvals.unapprovedCreation(p.workspaceId, def.kind, item.id)
    if (creation?.state === 'pending') {
      await this.db.transaction(async (tx) => {
        await this.repo.updateItem(p.workspaceId, item.id, this.patchOf(next), tx.kysely)
        await this.repo.writeRefs(p.workspaceId, def.kind, item.id, next.refs, tx.kysely)
        await approvals.refreshCreation(tx, creation, next.name, createdChanges(def, next.name))
      })
      return this.get(def, p, item.id)
    }
    const gate = (await approvals.gate(p, def.kind, item.nodeId)) ?? (next.nodeId !== item.nodeId ? await approvals.gate(p, def.kind, next.nodeId) : null)
    if (!gate) return null
    const waiting = await approvals.pendingUpdate(p.workspaceId, def.kind, item.id)
    if (waiting) throw new ApiError('conflict', `A change to this item awaits approval (${waiting.id}); wait for the decision or withdraw it first.`)
    const changes = await this.diff(p, item, next)
    const proposal = { name: next.name, nodeId: next.nodeId, body: next.body, refs: next.refs }
    const mark = await this.db.transaction((tx) =>
      approvals.open(tx, p, gate, { kind: def.kind, id: item.id, name: item.name, action: 'update', proposal, changes }),
    )
    approvals.dispatched()
    const live = await this.get(def, p, item.id)
    const body = next.body
    return { ...live, ...body, name: next.name, nodeId: next.nodeId, approval: mark }
  }

  /**
   * Media are content for approvals too: a file just created (upload or import) is held
   * when its home requires approval. Returns the mark for the answer, or null.
   */
  async holdNewMedia(p: Principal, media: { id: string; name: string; nodeId: string | null }): Promise<PendingMark | null> {
    const gate = (await this.approvals.gate(p, 'media', media.nodeId)) ?? null
    if (!gate) return null
    const mark = await this.db.transaction((tx) =>
      this.approvals.open(tx, p, gate, {
        kind: 'media',
        id: media.id,
        name: media.name,
        action: 'create',
        proposal: null,
        changes: createdChanges(null, media.name),
      }),
    )
    this.approvals.dispatched()
    return mark
  }

  /**
   * A media rename or move, held when the file's home (or its new home) requires approval:
   * answers the file as it will be, with the mark; null when the change may go live now.
   */
  async holdMediaUpdate(
    p: Principal,
    id: string,
    input: { name?: string; folderId?: string | null; nodeId?: string | null },
  ): Promise<{ changes: Record<string, unknown>; approval: PendingMark } | null> {
    const approvals = this.approvals
    const item = await this.requireOwned(p, 'media', id)
    const m = item.media!
    const name = input.name !== undefined ? cleanName(input.name) : m.name
    if (input.folderId) await this.requireFolder(p, input.folderId)
    const folderId = input.folderId !== undefined ? input.folderId : m.folder_id
    const nodeId = input.nodeId !== undefined ? await this.nodes.resolveHome(p, input.nodeId) : m.node_id
    if ((await approvals.unapprovedCreation(p.workspaceId, 'media', id))?.state === 'pending') return null
    const gate = (await approvals.gate(p, 'media', m.node_id)) ?? (nodeId !== m.node_id ? await approvals.gate(p, 'media', nodeId) : null)
    if (!gate) return null
    const waiting = await approvals.pendingUpdate(p.workspaceId, 'media', id)
    if (waiting) throw new ApiError('conflict', `A change to this item awaits approval (${waiting.id}); wait for the decision or withdraw it first.`)
    const changes = await this.diff(p, item, { name, nodeId, body: {}, refs: [] })
    if (folderId !== m.folder_id) changes.push({ kind: 'folder', label: 'Folder', detail: `${m.folder_id ?? 'none'} → ${folderId ?? 'none'}` })
    const proposal = { name, folderId, nodeId }
    const approval = await this.db.transaction((tx) => approvals.open(tx, p, gate, { kind: 'media', id, name: m.name, action: 'update', proposal, changes }))
    approvals.dispatched()
    return { changes: proposal, approval }
  }

  private patchOf(v: HeldVersion) {
    return { name: v.name, node_id: v.nodeId, body: JSON.stringify(v.body), updated_at: this.clock.now().toISOString() }
  }

  /** What an update changes, field by field (for the request's `changes`). */
  private async diff(p: Principal, item: Located, next: HeldVersion): Promise<Change[]> {
    const out: Change[] = []
    if (next.name !== item.name) out.push({ kind: 'name', label: 'Name', detail: `${JSON.stringify(item.name)} → ${JSON.stringify(next.name)}` })
    if (next.nodeId !== item.nodeId) {
      const nameOf = async (id: string | null) =>
        id
          ? await this.nodes.get(p, id).then(
              (n) => n.name,
              () => id,
            )
          : 'workspace root'
      out.push({ kind: 'location', label: 'Home location', detail: `${await nameOf(item.nodeId)} → ${await nameOf(next.nodeId)}` })
    }
    const before = item.body ?? {}
    for (const key of new Set([...Object.keys(before), ...Object.keys(next.body)])) {
      const a = before[key]
      const b = next.body[key]
      if (JSON.stringify(a) === JSON.stringify(b)) continue
      if (Array.isArray(a) || Array.isArray(b)) {
        const ka = new Set(((a as ContentRef[] | undefined) ?? []).map((x) => JSON.stringify(x)))
        const kb = new Set(((b as ContentRef[] | undefined) ?? []).map((x) => JSON.stringify(x)))
        const added = [...kb].filter((x) => !ka.has(x)).length
        const removed = [...ka].filter((x) => !kb.has(x)).length
        out.push({
          kind: 'list',
          label: key,
          detail: `${ka.size} → ${kb.size} entries (${added} added, ${removed} removed${added || removed ? '' : ', reordered'})`,
        })
      } else out.push({ kind: 'field', label: key, detail: `${JSON.stringify(a ?? null)} → ${JSON.stringify(b ?? null)}`.slice(0, 500) })
    }
    return out
  }

  /** Applies an approved update (inside the decision's transaction; reads go through it too). */
  async applyHeld(tx: Queryable, workspaceId: string, kind: string, id: string, proposal: Record<string, unknown>): Promise<void> {
    const repo = new ContentRepository(tx.kysely)
    const v = proposal as unknown as HeldVersion
    if (!(await repo.itemById(workspaceId, id, kind))) throw new ApiError('conflict', 'The content this request changes no longer exists.')
    for (const r of v.refs) {
      const there = r.kind === 'media' ? await repo.mediaById(workspaceId, r.id) : await repo.itemById(workspaceId, r.id, r.kind)
      if (!there) throw new ApiError('conflict', `The change refers to ${r.kind} ${r.id}, which no longer exists; reject it and make the change again.`)
    }
    await repo.updateItem(workspaceId, id, this.patchOf(v))
    await repo.writeRefs(workspaceId, kind, id, v.refs)
  }

  /** A rejected or withdrawn new item goes, unless something uses it meanwhile (then it stays unplayable). */
  async discardNew(workspaceId: string, kind: ContentKind, id: string): Promise<void> {
    if (!(await this.locate(workspaceId, kind, id))) return
    await this.assertDeletable(workspaceId, kind, id)
    await this.db.transaction(async (tx) => {
      await this.forget(tx, workspaceId, kind, id)
      await this.repo.deleteItem(workspaceId, id, tx.kysely)
    })
    await this.changed(workspaceId, kind, id)
  }

  async remove(def: KindDef, p: Principal, id: string): Promise<{ id: string; deleted: true }> {
    await this.requireOwned(p, def.kind, id)
    await this.assertDeletable(p.workspaceId, def.kind, id)
    await this.db.transaction(async (tx) => {
      await this.forget(tx, p.workspaceId, def.kind, id)
      await this.repo.deleteItem(p.workspaceId, id, tx.kysely)
      await this.approvals.closeFor(tx, p.workspaceId, def.kind, id)
    })
    this.approvals.dispatched()
    await this.changed(p.workspaceId, def.kind, id)
    return { id, deleted: true }
  }

  /**
   * Deleting content others use is refused (409 conflict naming the users) rather than
   * cascading: a playlist silently losing an item, or a screen going blank, is worse than
   * one more step for the operator.
   */
  async assertDeletable(workspaceId: string, kind: ContentKind, id: string): Promise<void> {
    const users = await this.repo.referrers(workspaceId, kind, id, 5)
    if (users.length) throw new ApiError('conflict', `Still used by ${users.map((u) => `${u.from_kind} ${u.from_id}`).join(', ')}; remove it there first.`)
    if (kind === 'folder') {
      const inFolder = { n: await this.repo.mediaInFolder(workspaceId, id) }
      // JSON bodies are read whole, never queried inside (the same on both engines).
      const folders = await this.repo.folderBodies(workspaceId)
      const sub = { n: folders.filter((f) => (JSON.parse(f) as { parentId?: unknown }).parentId === id).length }
      if ((inFolder?.n ?? 0) + (sub?.n ?? 0) > 0)
        throw new ApiError('conflict', `The folder still holds ${inFolder?.n ?? 0} file(s) and ${sub?.n ?? 0} folder(s); move or delete them first.`)
    }
    for (const u of this.usage.all()) {
      const used = await u(workspaceId, kind, id)
      if (used && used.count > 0) throw new ApiError('conflict', `Still used by ${used.count} ${used.what}; change that first.`)
    }
  }

  /** Drops an item's shares and outgoing references (inside the delete's transaction). */
  async forget(tx: Queryable, workspaceId: string, kind: ContentKind, id: string): Promise<void> {
    await this.repo.forget(workspaceId, kind, id, tx.kysely)
  }

  /** What lives at or is shared to a node (NodeService usage: such a node cannot be deleted). */
  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    return this.repo.countAtNode(workspaceId, nodeId)
  }

  // ---- sharing -----------------------------------------------------------------------

  async listShares(p: Principal, kind: ContentKind, id: string): Promise<{ nodeId: string; createdAt: string }[]> {
    await this.requireVisible(p, kind, id)
    return (await this.repo.shares(p.workspaceId, kind, id)).map((r) => ({ nodeId: r.node_id, createdAt: r.created_at }))
  }

  /** Shares the item with another node (idempotent). The target must be a node the credential reaches. */
  async share(p: Principal, kind: ContentKind, id: string, nodeId: string): Promise<{ nodeId: string; createdAt: string }[]> {
    await this.requireOwned(p, kind, id)
    const target = await this.nodes.resolveHome(p, nodeId)
    if (target === null) throw validation('nodeId is required.')
    await this.repo.share(p.workspaceId, kind, id, target, this.clock.now().toISOString())
    await this.changed(p.workspaceId, kind, id)
    return this.listShares(p, kind, id)
  }

  async unshare(p: Principal, kind: ContentKind, id: string, nodeId: string): Promise<{ nodeId: string; deleted: true }> {
    await this.requireOwned(p, kind, id)
    if (!(await this.repo.unshare(p.workspaceId, kind, id, nodeId))) throw notFound('The item is not shared with that location.')
    await this.changed(p.workspaceId, kind, id)
    return { nodeId, deleted: true }
  }

  // ---- recall ------------------------------------------------------------------------

  private tableOf(kind: ContentKind): 'media' | 'content_items' {
    return kind === 'media' ? 'media' : 'content_items'
  }

  /** Pulls the item from every screen: unplayable until restored. Recalling a recalled item is 409 conflict. */
  async recall(p: Principal, kind: ContentKind, id: string, reason: string | null): Promise<Located> {
    const meta = RECALLABLE[kind]
    if (!meta) throw validation(`${kind} cannot be recalled.`)
    const item = await this.requireOwned(p, kind, id)
    if (item.recalledAt) throw new ApiError('conflict', `This ${meta.label.toLowerCase()} is already recalled (since ${item.recalledAt}); restore it first.`)
    const now = this.clock.now().toISOString()
    const by = actorRef(p)
    // The recall and its event commit together: a crash after the change cannot lose the webhook.
    const recalled = await this.db.transaction(async (tx) => {
      if (!(await this.repo.recall(this.tableOf(kind), p.workspaceId, id, reason, by, now, tx.kysely))) return false
      await this.outbox.record(tx, {
        event: 'content.recalled',
        workspaceId: p.workspaceId,
        occurredAt: now,
        data: { kind: kind as RecallableKind, id, name: meta.label, reason, recalledBy: by, contentName: item.name },
      })
      return true
    })
    if (!recalled) throw new ApiError('conflict', `This ${meta.label.toLowerCase()} is already recalled.`)
    await this.changed(p.workspaceId, kind, id)
    await this.outbox.dispatch()
    return (await this.locate(p.workspaceId, kind, id))!
  }

  async restore(p: Principal, kind: ContentKind, id: string): Promise<Located> {
    const meta = RECALLABLE[kind]
    if (!meta) throw validation(`${kind} cannot be restored.`)
    const item = await this.requireOwned(p, kind, id)
    if (!item.recalledAt) throw new ApiError('conflict', `This ${meta.label.toLowerCase()} is not recalled.`)
    const now = this.clock.now().toISOString()
    const restored = await this.db.transaction(async (tx) => {
      if (!(await this.repo.restore(this.tableOf(kind), p.workspaceId, id, now, tx.kysely))) return false
      await this.outbox.record(tx, {
        event: 'content.restored',
        workspaceId: p.workspaceId,
        occurredAt: now,
        data: { kind: kind as RecallableKind, id, name: meta.label, restoredBy: actorRef(p), contentName: item.name },
      })
      return true
    })
    if (!restored) throw new ApiError('conflict', `This ${meta.label.toLowerCase()} is not recalled.`)
    await this.changed(p.workspaceId, kind, id)
    await this.outbox.dispatch()
    return (await this.locate(p.workspaceId, kind, id))!
  }

  // ---- playing -----------------------------------------------------------------------

  /** Whether the item can go on a screen now; the reason (for 422 content_unplayable) when not. */
  async playability(workspaceId: string, kind: ContentKind, id: string, depth = 0): Promise<Playability> {
    const item = await this.locate(workspaceId, kind, id)
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
      const rules = (body.rules as { enabled?: boolean }[] | undefined) ?? []
      if (!body.fallback && !rules.some((r) => r.enabled !== false))
        return { playable: false, code: 'empty', reason: `Schedule "${item.name}" has no enabled rule and no fallback.` }
      return { playable: true }
    }
    if (kind === 'layout' && !((body.zones as unknown[] | undefined) ?? []).length)
      return { playable: false, code: 'empty', reason: `Layout "${item.name}" has no zones.` }
    return { playable: true }
  }

  /**
   * A JSON description a player can render: files by their download path and sha256
   * (cache key), playlists with each item's effective duration (unplayable items left
   * out), schedules with the described content of every rule, apps with their config.
   * Returns null when the item does not exist.
   */
  async describeForDevice(workspaceId: string, kind: ContentKind, id: string, depth = 0): Promise<Record<string, unknown> | null> {
    const item = await this.locate(workspaceId, kind, id)
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
      case 'schedule': {
        const contents: Record<string, unknown> = {}
        const refs = [
          ...((body.rules as { content: ContentRef }[] | undefined) ?? []).map((r) => r.content),
          ...(body.fallback ? [body.fallback as ContentRef] : []),
        ]
        for (const r of refs) contents[`${r.kind}:${r.id}`] ??= await nested(r)
        return { ...base, schedule: { timezone: body.timezone ?? undefined, rules: body.rules ?? [], fallback: body.fallback ?? null }, contents }
      }
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

interface HeldVersion {
  name: string
  nodeId: string | null
  body: Body
  refs: ContentRef[]
}

function createdChanges(def: KindDef | null, name: string): Change[] {
  const label = def ? def.label : 'Media'
  return [{ kind: 'created', label: `New ${label.toLowerCase()}`, detail: name }]
}

/** The kind-specific fields of a request body (name and nodeId are handled by the service). */
function pick(def: KindDef, input: Body): Body {
  return Object.fromEntries(
    Object.keys(def.fields)
      .filter((k) => input[k] !== undefined)
      .map((k) => [k, input[k]]),
  )
}
