// The content library apart from file handling: every kind in content/kinds.ts (CRUD,
// search, paging), and what all kinds share, media included — home location and
// explicit sharing, availability at a screen's node, references between items (which
// block deletes), recall/restore with their events, playability, the description a
// player renders, and change hooks for the device link.
import type { Clock, IdGenerator } from '../clock.js'
import type { Database, Queryable } from '../db/Database.js'
import { ApiError, notFound, validation } from '../errors.js'
import { actorRef, type Principal } from '../auth/Principal.js'
import type { EventBus } from '../events/EventBus.js'
import { descPageSql, pageOf, type Page, type PageRequest } from '../http/pagination.js'
import { cleanName, type NodeService } from './NodeService.js'
import { KIND_BY_NAME, RECALLABLE, type Body, type ContentKind, type ContentRef, type KindDef, type PrepareContext } from './content/kinds.js'

interface ItemRow {
  id: string
  workspace_id: string
  kind: string
  name: string
  node_id: string | null
  body: string
  recalled_at: string | null
  recall_reason: string | null
  recalled_by: string | null
  created_at: string
  updated_at: string
}

export interface MediaRowLite {
  id: string
  workspace_id: string
  name: string
  kind: string
  mime_type: string
  size_bytes: number
  sha256: string
  state: string
  failure_reason: string | null
  width: number | null
  height: number | null
  duration_ms: number | null
  folder_id: string | null
  node_id: string | null
  recalled_at: string | null
  recall_reason: string | null
  updated_at: string
}

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

export class ContentService {
  private readonly listeners: ContentChangeListener[] = []
  private readonly usages: ContentUsage[] = []

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly events: EventBus,
    private readonly log: { error(obj: unknown, msg: string): void },
  ) {}

  // ---- hooks -------------------------------------------------------------------------

  /** Called after an item is updated, recalled, restored, shared, unshared or deleted. Returns an unsubscribe. */
  onContentChanged(listener: ContentChangeListener): () => void {
    this.listeners.push(listener)
    return () => {
      const i = this.listeners.indexOf(listener)
      if (i >= 0) this.listeners.splice(i, 1)
    }
  }

  /** Other services register what uses content, so deleting used content is refused (409 conflict). */
  registerUsage(u: ContentUsage): void {
    this.usages.push(u)
  }

  async changed(workspaceId: string, kind: ContentKind, id: string): Promise<void> {
    for (const l of [...this.listeners]) {
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
    if (!p.nodeId) return { sql: '', params: [] }
    const ids = await this.nodes.subtree(p.workspaceId, p.nodeId)
    if (!ids.length) return { sql: ' AND 1 = 0', params: [] }
    const marks = ids.map(() => '?').join(',')
    return {
      sql: ` AND (${table}.node_id IN (${marks}) OR ${table}.id IN (SELECT content_id FROM content_shares WHERE workspace_id = ? AND content_kind = ? AND node_id IN (${marks})))`,
      params: [...ids, p.workspaceId, kind, ...ids],
    }
  }

  async locate(workspaceId: string, kind: ContentKind, id: string): Promise<Located | undefined> {
    if (kind === 'media') {
      const m = await this.db.get<MediaRowLite>('SELECT * FROM media WHERE id = ? AND workspace_id = ?', [id, workspaceId])
      return m && { kind, id, workspaceId, name: m.name, nodeId: m.node_id, recalledAt: m.recalled_at, recallReason: m.recall_reason, media: m }
    }
    const r = await this.db.get<ItemRow>('SELECT * FROM content_items WHERE id = ? AND workspace_id = ? AND kind = ?', [id, workspaceId, kind])
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
    return (
      await this.db.all<{ node_id: string }>(
        'SELECT node_id FROM content_shares WHERE workspace_id = ? AND content_kind = ? AND content_id = ? ORDER BY created_at, node_id',
        [workspaceId, kind, id],
      )
    ).map((r) => r.node_id)
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
          const row: ItemRow | undefined = await this.db.get<ItemRow>("SELECT * FROM content_items WHERE id = ? AND workspace_id = ? AND kind = 'folder'", [
            cur,
            p.workspaceId,
          ])
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

  private async writeRefs(tx: Queryable, workspaceId: string, kind: ContentKind, id: string, refs: ContentRef[]): Promise<void> {
    await tx.run('DELETE FROM content_refs WHERE from_id = ? AND workspace_id = ?', [id, workspaceId])
    const unique = new Map(refs.map((r) => [`${r.kind}:${r.id}`, r]))
    for (const r of unique.values()) {
      await tx.run('INSERT INTO content_refs (workspace_id, from_kind, from_id, to_kind, to_id) VALUES (?, ?, ?, ?, ?)', [workspaceId, kind, id, r.kind, r.id])
    }
  }

  async list(def: KindDef, p: Principal, page: PageRequest, filter: { search?: string | undefined }): Promise<Page<ContentView>> {
    const scope = await this.visibleClause(p, def.kind, 'content_items')
    let where = `workspace_id = ? AND kind = ?${scope.sql}`
    const params: (string | number)[] = [p.workspaceId, def.kind, ...scope.params]
    if (filter.search) {
      where += ' AND LOWER(name) LIKE ?'
      params.push(`%${filter.search.toLowerCase()}%`)
    }
    const total = page.count ? (await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM content_items WHERE ${where}`, params))!.n : undefined
    const sql = descPageSql(page)
    const rows = await this.db.all<ItemRow>(`SELECT * FROM content_items WHERE ${where}${sql.where}${sql.tail}`, [...params, ...sql.params, ...sql.limitParams])
    const shares = await this.sharesOf(
      p.workspaceId,
      def.kind,
      rows.map((r) => r.id),
    )
    return pageOf(rows, page, (r) => this.itemView(def, r, shares.get(r.id) ?? []), total)
  }

  private async sharesOf(workspaceId: string, kind: ContentKind, ids: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>()
    if (!ids.length) return out
    const rows = await this.db.all<{ content_id: string; node_id: string }>(
      `SELECT content_id, node_id FROM content_shares WHERE workspace_id = ? AND content_kind = ? AND content_id IN (${ids.map(() => '?').join(',')}) ORDER BY created_at, node_id`,
      [workspaceId, kind, ...ids],
    )
    for (const r of rows) out.set(r.content_id, [...(out.get(r.content_id) ?? []), r.node_id])
    return out
  }

  async get(def: KindDef, p: Principal, id: string): Promise<ContentView> {
    await this.requireVisible(p, def.kind, id)
    const r = (await this.db.get<ItemRow>('SELECT * FROM content_items WHERE id = ? AND workspace_id = ?', [id, p.workspaceId]))!
    return this.itemView(def, r, await this.sharedNodes(p.workspaceId, def.kind, id))
  }

  async create(def: KindDef, p: Principal, input: Body & { name: string; nodeId?: string | null }): Promise<ContentView> {
    const name = cleanName(input.name)
    const nodeId = await this.nodes.resolveHome(p, input.nodeId)
    for (const k of def.required ?? []) if (input[k] === undefined || input[k] === null) throw validation(`body: ${k} is required.`)
    const id = this.ids.next(def.idKind)
    const { body, refs } = await def.prepare(this.prepareContext(p, null), pick(def, input), null)
    const now = this.clock.now().toISOString()
    await this.db.transaction(async (tx) => {
      await tx.run('INSERT INTO content_items (id, workspace_id, kind, name, node_id, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
        id,
        p.workspaceId,
        def.kind,
        name,
        nodeId,
        JSON.stringify(body),
        now,
        now,
      ])
      await this.writeRefs(tx, p.workspaceId, def.kind, id, refs)
    })
    return this.get(def, p, id)
  }

  async update(def: KindDef, p: Principal, id: string, input: Body & { name?: string; nodeId?: string | null }): Promise<ContentView> {
    const item = await this.requireOwned(p, def.kind, id)
    const name = input.name !== undefined ? cleanName(input.name) : item.name
    const nodeId = input.nodeId !== undefined ? await this.nodes.resolveHome(p, input.nodeId) : item.nodeId
    const current = item.body ?? {}
    const { body, refs } = await def.prepare(this.prepareContext(p, id), { ...current, ...pick(def, input) }, current)
    await this.db.transaction(async (tx) => {
      await tx.run('UPDATE content_items SET name = ?, node_id = ?, body = ?, updated_at = ? WHERE id = ? AND workspace_id = ?', [
        name,
        nodeId,
        JSON.stringify(body),
        this.clock.now().toISOString(),
        id,
        p.workspaceId,
      ])
      await this.writeRefs(tx, p.workspaceId, def.kind, id, refs)
    })
    await this.changed(p.workspaceId, def.kind, id)
    return this.get(def, p, id)
  }

  async remove(def: KindDef, p: Principal, id: string): Promise<{ id: string; deleted: true }> {
    await this.requireOwned(p, def.kind, id)
    await this.assertDeletable(p.workspaceId, def.kind, id)
    await this.db.transaction(async (tx) => {
      await this.forget(tx, p.workspaceId, def.kind, id)
      await tx.run('DELETE FROM content_items WHERE id = ? AND workspace_id = ?', [id, p.workspaceId])
    })
    await this.changed(p.workspaceId, def.kind, id)
    return { id, deleted: true }
  }

  /**
   * Deleting content others use is refused (409 conflict naming the users) rather than
   * cascading: a playlist silently losing an item, or a screen going blank, is worse than
   * one more step for the operator.
   */
  async assertDeletable(workspaceId: string, kind: ContentKind, id: string): Promise<void> {
    const users = await this.db.all<{ from_kind: string; from_id: string }>(
      'SELECT from_kind, from_id FROM content_refs WHERE workspace_id = ? AND to_kind = ? AND to_id = ? ORDER BY from_id LIMIT 5',
      [workspaceId, kind, id],
    )
    if (users.length) throw new ApiError('conflict', `Still used by ${users.map((u) => `${u.from_kind} ${u.from_id}`).join(', ')}; remove it there first.`)
    if (kind === 'folder') {
      const inFolder = await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM media WHERE workspace_id = ? AND folder_id = ?', [workspaceId, id])
      // JSON bodies are read whole, never queried inside (the same on both engines).
      const folders = await this.db.all<{ body: string }>("SELECT body FROM content_items WHERE workspace_id = ? AND kind = 'folder'", [workspaceId])
      const sub = { n: folders.filter((f) => (JSON.parse(f.body) as { parentId?: unknown }).parentId === id).length }
      if ((inFolder?.n ?? 0) + (sub?.n ?? 0) > 0)
        throw new ApiError('conflict', `The folder still holds ${inFolder?.n ?? 0} file(s) and ${sub?.n ?? 0} folder(s); move or delete them first.`)
    }
    for (const u of this.usages) {
      const used = await u(workspaceId, kind, id)
      if (used && used.count > 0) throw new ApiError('conflict', `Still used by ${used.count} ${used.what}; change that first.`)
    }
  }

  /** Drops an item's shares and outgoing references (inside the delete's transaction). */
  async forget(tx: Queryable, workspaceId: string, kind: ContentKind, id: string): Promise<void> {
    await tx.run('DELETE FROM content_shares WHERE workspace_id = ? AND content_kind = ? AND content_id = ?', [workspaceId, kind, id])
    await tx.run('DELETE FROM content_refs WHERE workspace_id = ? AND from_id = ?', [workspaceId, id])
  }

  /** What lives at or is shared to a node (NodeService usage: such a node cannot be deleted). */
  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    const a = await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM content_items WHERE workspace_id = ? AND node_id = ?', [workspaceId, nodeId])
    const b = await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM media WHERE workspace_id = ? AND node_id = ?', [workspaceId, nodeId])
    const c = await this.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM content_shares WHERE workspace_id = ? AND node_id = ?', [workspaceId, nodeId])
    return (a?.n ?? 0) + (b?.n ?? 0) + (c?.n ?? 0)
  }

  // ---- sharing -----------------------------------------------------------------------

  async listShares(p: Principal, kind: ContentKind, id: string): Promise<{ nodeId: string; createdAt: string }[]> {
    await this.requireVisible(p, kind, id)
    return (
      await this.db.all<{ node_id: string; created_at: string }>(
        'SELECT node_id, created_at FROM content_shares WHERE workspace_id = ? AND content_kind = ? AND content_id = ? ORDER BY created_at, node_id',
        [p.workspaceId, kind, id],
      )
    ).map((r) => ({ nodeId: r.node_id, createdAt: r.created_at }))
  }

  /** Shares the item with another node (idempotent). The target must be a node the credential reaches. */
  async share(p: Principal, kind: ContentKind, id: string, nodeId: string): Promise<{ nodeId: string; createdAt: string }[]> {
    await this.requireOwned(p, kind, id)
    const target = await this.nodes.resolveHome(p, nodeId)
    if (target === null) throw validation('nodeId is required.')
    await this.db.run(
      'INSERT INTO content_shares (workspace_id, content_kind, content_id, node_id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [p.workspaceId, kind, id, target, this.clock.now().toISOString()],
    )
    await this.changed(p.workspaceId, kind, id)
    return this.listShares(p, kind, id)
  }

  async unshare(p: Principal, kind: ContentKind, id: string, nodeId: string): Promise<{ nodeId: string; deleted: true }> {
    await this.requireOwned(p, kind, id)
    const r = await this.db.run('DELETE FROM content_shares WHERE workspace_id = ? AND content_kind = ? AND content_id = ? AND node_id = ?', [
      p.workspaceId,
      kind,
      id,
      nodeId,
    ])
    if (!r.changes) throw notFound('The item is not shared with that location.')
    await this.changed(p.workspaceId, kind, id)
    return { nodeId, deleted: true }
  }

  // ---- recall ------------------------------------------------------------------------

  private tableOf(kind: ContentKind): string {
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
    const r = await this.db.run(
      `UPDATE ${this.tableOf(kind)} SET recalled_at = ?, recall_reason = ?, recalled_by = ?, updated_at = ? WHERE id = ? AND workspace_id = ? AND recalled_at IS NULL`,
      [now, reason, by, now, id, p.workspaceId],
    )
    if (!r.changes) throw new ApiError('conflict', `This ${meta.label.toLowerCase()} is already recalled.`)
    await this.changed(p.workspaceId, kind, id)
    await this.events.publish({
      event: 'content.recalled',
      workspaceId: p.workspaceId,
      occurredAt: now,
      data: { kind, id, name: meta.label, reason, recalledBy: by, contentName: item.name },
    })
    return (await this.locate(p.workspaceId, kind, id))!
  }

  async restore(p: Principal, kind: ContentKind, id: string): Promise<Located> {
    const meta = RECALLABLE[kind]
    if (!meta) throw validation(`${kind} cannot be restored.`)
    const item = await this.requireOwned(p, kind, id)
    if (!item.recalledAt) throw new ApiError('conflict', `This ${meta.label.toLowerCase()} is not recalled.`)
    const now = this.clock.now().toISOString()
    const r = await this.db.run(
      `UPDATE ${this.tableOf(kind)} SET recalled_at = NULL, recall_reason = NULL, recalled_by = NULL, updated_at = ? WHERE id = ? AND workspace_id = ? AND recalled_at IS NOT NULL`,
      [now, id, p.workspaceId],
    )
    if (!r.changes) throw new ApiError('conflict', `This ${meta.label.toLowerCase()} is not recalled.`)
    await this.changed(p.workspaceId, kind, id)
    await this.events.publish({
      event: 'content.restored',
      workspaceId: p.workspaceId,
      occurredAt: now,
      data: { kind, id, name: meta.label, restoredBy: actorRef(p), contentName: item.name },
    })
    return (await this.locate(p.workspaceId, kind, id))!
  }

  // ---- playing -----------------------------------------------------------------------

  /** Whether the item can go on a screen now; the reason (for 422 content_unplayable) when not. */
  async playability(workspaceId: string, kind: ContentKind, id: string, depth = 0): Promise<Playability> {
    const item = await this.locate(workspaceId, kind, id)
    if (!item) return { playable: false, code: 'not_found', reason: `${kind} ${id} does not exist.` }
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

/** The kind-specific fields of a request body (name and nodeId are handled by the service). */
function pick(def: KindDef, input: Body): Body {
  return Object.fromEntries(
    Object.keys(def.fields)
      .filter((k) => input[k] !== undefined)
      .map((k) => [k, input[k]]),
  )
}
