// The content library apart from file handling: every kind in content/kinds.ts (CRUD,
// search, paging), references between items (which block deletes), approval holds of
// content and media, and the change hook the device link listens to. Beside it, by job:
// ContentAccess (who may see or change an item), ContentSharing, ContentRecall, and
// ContentPlayback (playability and what a player renders).
import { Listeners } from '../../platform/hooks.js'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database, Queryable } from '../../platform/db/Database.js'
import type { ContentAccess } from './ContentAccess.js'
import { ContentRepository, type ContentItemRow } from './ContentRepository.js'
import type { ContentChangeListener, ContentUsage, ContentView, Located } from './library.js'
import { ApiError, validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import { cleanName, type NodeService } from '../nodes/index.js'
import type { ApprovalService, Change, PendingMark } from '../approvals/index.js'
import { KIND_BY_NAME, type Body, type ContentKind, type ContentRef, type KindDef, type PrepareContext } from './kinds.js'

type ItemRow = ContentItemRow

export type { ContentChangeListener, ContentUsage, ContentView, Located, MediaRowLite, Playability } from './library.js'

/** How far up the containment chain (media → playlist → schedule → …) a change is followed. */
const MAX_CONTAINMENT_DEPTH = 6

export class ContentService {
  private readonly repo: ContentRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    /** Who may see or change an item. */
    private readonly access: ContentAccess,
    private readonly log: { error(obj: unknown, msg: string): void },
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

  /**
   * `ids` and every item containing any of them, followed up the containment chain (media →
   * playlist → schedule → …, through playlist items, schedule rules and fallbacks, layout
   * zones): what a screen or a takeover may be showing when one of `ids` changes.
   */
  async containing(workspaceId: string, ids: readonly string[]): Promise<string[]> {
    const all = new Set<string>(ids)
    let frontier = [...ids]
    for (let depth = 0; depth < MAX_CONTAINMENT_DEPTH && frontier.length; depth++) {
      const next: string[] = []
      for (const from of await this.repo.containersOf(workspaceId, frontier)) if (!all.has(from)) all.add(from), next.push(from)
      frontier = next
    }
    return [...all]
  }

  /** The zones of the workspace's largest layout (0 without one): what a screen of it can play at once. */
  mostLayoutZones(workspaceId: string): Promise<number> {
    return this.repo.mostLayoutZones(workspaceId)
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
        const item = ref.kind === 'media' || KIND_BY_NAME.has(ref.kind) ? await this.access.locate(p.workspaceId, ref.kind, ref.id) : undefined
        if (!item || !(await this.access.canSee(p, item)))
          throw validation(`${field}: ${ref.kind} ${JSON.stringify(ref.id)} does not exist in this workspace or is out of reach.`)
      },
      requireFolder: async (id, field) => {
        await this.access.requireFolder(p, id, field)
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

  async list(def: KindDef, p: Principal, page: PageRequest, filter: { search?: string | undefined }): Promise<Page<ContentView>> {
    const f = { kind: def.kind, scopeIds: await this.access.scopeIds(p), search: filter.search }
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
    await this.access.requireVisible(p, def.kind, id)
    const r = (await this.repo.itemById(p.workspaceId, id))!
    const view = this.itemView(def, r, await this.access.sharedNodes(p.workspaceId, def.kind, id))
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

  /** The checks of an update and the version it makes, writing nothing. */
  private async prepareUpdate(def: KindDef, p: Principal, id: string, input: Body & { name?: string; nodeId?: string | null }) {
    const item = await this.access.requireOwned(p, def.kind, id)
    const name = input.name !== undefined ? cleanName(input.name) : item.name
    const nodeId = input.nodeId !== undefined ? await this.nodes.resolveHome(p, input.nodeId) : item.nodeId
    const current = item.body ?? {}
    const { body, refs } = await def.prepare(this.prepareContext(p, id), { ...current, ...pick(def, input) }, current)
    return { item, next: { name, nodeId, body, refs } satisfies HeldVersion }
  }

  /** What `update` would do, checked the same way, writing nothing (the timeline preview). */
  async planUpdate(def: KindDef, p: Principal, id: string, input: Body & { name?: string; nodeId?: string | null }): Promise<ContentPlan> {
    const { item, next } = await this.prepareUpdate(def, p, id, input)
    const creation = await this.approvals.unapprovedCreation(p.workspaceId, def.kind, item.id)
    const gate = creation?.state === 'pending' ? null : await this.gateFor(def, p, item, next.nodeId)
    if (gate) await this.refuseIfWaiting(p, def, item.id)
    return { kind: 'content', contentKind: def.kind, contentId: item.id, body: next.body, held: gate !== null }
  }

  /** What `create` would do, checked the same way, writing nothing: a new item is on no screen yet. */
  async planCreate(def: KindDef, p: Principal, input: Body & { name: string; nodeId?: string | null }): Promise<ContentPlan> {
    cleanName(input.name)
    const nodeId = await this.nodes.resolveHome(p, input.nodeId)
    for (const k of def.required ?? []) if (input[k] === undefined || input[k] === null) throw validation(`body: ${k} is required.`)
    const { body } = await def.prepare(this.prepareContext(p, null), pick(def, input), null)
    return { kind: 'content', contentKind: def.kind, contentId: null, body, held: (await this.approvals.gate(p, def.kind, nodeId)) !== null }
  }

  async update(def: KindDef, p: Principal, id: string, input: Body & { name?: string; nodeId?: string | null }): Promise<ContentView> {
    const { item, next } = await this.prepareUpdate(def, p, id, input)
    const { name, nodeId, body, refs } = next
    const held = await this.holdUpdate(def, p, item, next)
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
    const gate = await this.gateFor(def, p, item, next.nodeId)
    if (!gate) return null
    await this.refuseIfWaiting(p, def, item.id)
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

  /** The approval gate an update of `item` (possibly moving it to `nextNodeId`) passes, or null when it goes live now. */
  private async gateFor(def: KindDef, p: Principal, item: Located, nextNodeId: string | null) {
    return (await this.approvals.gate(p, def.kind, item.nodeId)) ?? (nextNodeId !== item.nodeId ? await this.approvals.gate(p, def.kind, nextNodeId) : null)
  }

  /** 409 while an earlier change to the item awaits its decision. */
  private async refuseIfWaiting(p: Principal, def: KindDef, id: string): Promise<void> {
    const waiting = await this.approvals.pendingUpdate(p.workspaceId, def.kind, id)
    if (waiting) throw new ApiError('conflict', `A change to this item awaits approval (${waiting.id}); wait for the decision or withdraw it first.`)
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
    const item = await this.access.requireOwned(p, 'media', id)
    const m = item.media!
    const name = input.name !== undefined ? cleanName(input.name) : m.name
    if (input.folderId) await this.access.requireFolder(p, input.folderId)
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
    if (!(await this.access.locate(workspaceId, kind, id))) return
    await this.assertDeletable(workspaceId, kind, id)
    await this.db.transaction(async (tx) => {
      await this.forget(tx, workspaceId, kind, id)
      await this.repo.deleteItem(workspaceId, id, tx.kysely)
    })
    await this.changed(workspaceId, kind, id)
  }

  async remove(def: KindDef, p: Principal, id: string): Promise<{ id: string; deleted: true }> {
    await this.access.requireOwned(p, def.kind, id)
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
}

/** A content write as a dry run answers it (the timeline preview): the item's next body, and whether approval would hold it. */
export interface ContentPlan {
  kind: 'content'
  contentKind: string
  /** Null for a create: a new item is on no screen yet. */
  contentId: string | null
  body: Body
  /** True when the change would wait for approval instead of going live. */
  held: boolean
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
