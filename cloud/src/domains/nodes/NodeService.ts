// The location tree: workspace → nodes (org_unit, location, screen_group). Every
// resource has a home nodeId (null = root); a pinned credential reaches its node and
// everything below it. Other services ask this one whether a node is reachable.
import { Listeners } from '../../platform/hooks.js'
import { Type, type Static } from '@sinclair/typebox'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database, Queryable } from '../../platform/db/Database.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import { Nullable, Timestamp } from '../../platform/contract.js'
import { NodeRepository, type HomedTable } from './NodeRepository.js'
import type { RowWith } from '../../platform/db/schema.js'
import type { NodesTable } from './tables.js'

export const NODE_KINDS = ['org_unit', 'location', 'screen_group'] as const
export type NodeKind = (typeof NODE_KINDS)[number]

type NodeRow = RowWith<NodesTable, { kind: NodeKind }>

export const NodeKindSchema = Type.Union(NODE_KINDS.map((k) => Type.Literal(k)))
/** A node as the API answers it: the route's response schema, and NodeView is derived from it. */
export const Node = Type.Object({
  id: Type.String(),
  parentId: Nullable(Type.String()),
  kind: NodeKindSchema,
  name: Type.String(),
  path: Type.Array(Type.String(), { description: 'Ids from the top of the tree down to this node.' }),
  geo: Nullable(
    Type.Object(
      { lat: Type.Number(), lon: Type.Number() },
      { description: 'The location\'s point (WGS 84); screens take their nearest location\'s (CAP feeds with areaMatch "geo").' },
    ),
  ),
  geocodes: Type.Array(Type.String(), { description: "Geocodes as `valueName:value` (e.g. `SAME:006037`); screens take their nearest location's." }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type NodeView = Static<typeof Node>

/** Something else in the system that may live at a node and blocks its deletion. */
export type NodeUsage = (workspaceId: string, nodeId: string) => Promise<{ what: string; count: number } | null>
/** What another domain does inside a location's delete transaction (it is empty of what blocks a delete by then). */
export type NodeRemoval = (tx: Queryable, workspaceId: string, nodeId: string) => Promise<void>

export class NodeService {
  private readonly repo: NodeRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    /** What other domains keep at locations (they add to it while they are wired). */
    private readonly usage: Listeners<NodeUsage> = new Listeners(),
    /** What other domains do when a location goes (in its delete transaction). */
    private readonly removal: Listeners<NodeRemoval> = new Listeners(),
  ) {
    this.repo = new NodeRepository(db.kysely)
  }

  private async row(workspaceId: string, id: string): Promise<NodeRow | undefined> {
    return (await this.repo.byId(workspaceId, id)) as NodeRow | undefined
  }

  /** Is `id` a node of the workspace (reachable or not)? */
  /** The location's name, or null when it is not one of the workspace's. */
  async nameOf(workspaceId: string, id: string): Promise<string | null> {
    return (await this.row(workspaceId, id))?.name ?? null
  }

  async exists(workspaceId: string, id: string): Promise<boolean> {
    return (await this.repo.byId(workspaceId, id)) !== undefined
  }

  /** Ancestors from the node itself up to the top (ids). */
  async lineage(workspaceId: string, id: string): Promise<string[]> {
    const out: string[] = []
    let cur: string | null = id
    while (cur && out.length < 64) {
      const r: { parent_id: string | null } | undefined = await this.repo.parentOf(workspaceId, cur)
      if (!r) break
      out.push(cur)
      cur = r.parent_id
    }
    return out
  }

  /** Is `nodeId` (null = root) at or below `ancestorId` (null = root, which holds everything)? */
  async isWithin(workspaceId: string, nodeId: string | null, ancestorId: string | null): Promise<boolean> {
    if (ancestorId === null) return true
    if (nodeId === null) return false
    return (await this.lineage(workspaceId, nodeId)).includes(ancestorId)
  }

  /** Can this credential reach a resource whose home is `nodeId`? */
  reaches(p: Principal, nodeId: string | null): Promise<boolean> {
    return this.isWithin(p.workspaceId, nodeId, p.nodeId)
  }

  /** Ids of the node and every node below it. */
  async subtree(workspaceId: string, rootId: string): Promise<string[]> {
    const all = await this.repo.edges(workspaceId)
    const children = new Map<string, string[]>()
    for (const n of all) {
      if (!n.parent_id) continue
      const list = children.get(n.parent_id) ?? []
      list.push(n.id)
      children.set(n.parent_id, list)
    }
    const out: string[] = []
    const stack = all.some((n) => n.id === rootId) ? [rootId] : []
    while (stack.length) {
      const id = stack.pop()!
      out.push(id)
      stack.push(...(children.get(id) ?? []))
    }
    return out
  }

  /**
   * The row `id` of `table` in the credential's workspace, when the credential reaches its
   * home node (`node_id`); otherwise 404 `not_found` with "No such <what>." — so another
   * workspace's row and one outside a pinned key's subtree look the same.
   */
  async findReachable<T extends { node_id: string | null }>(p: Principal, table: HomedTable, id: string, what: string): Promise<T> {
    const r = (await this.repo.homedRow(table, p.workspaceId, id)) as T | undefined
    if (!r || !(await this.reaches(p, r.node_id))) throw notFound(`No such ${what}.`)
    return r
  }

  /** Node ids the credential reaches, for a repository's filter; null = everything (not pinned). */
  async scopeIds(p: Principal): Promise<string[] | null> {
    return p.nodeId ? this.subtree(p.workspaceId, p.nodeId) : null
  }

  /** SQL condition keeping rows whose `column` (a home nodeId) the credential reaches. */
  async scopeClause(p: Principal, column: string): Promise<{ sql: string; params: string[] }> {
    if (!p.nodeId) return { sql: '', params: [] }
    const ids = await this.subtree(p.workspaceId, p.nodeId)
    if (!ids.length) return { sql: ' AND 1 = 0', params: [] }
    return { sql: ` AND ${column} IN (${ids.map(() => '?').join(',')})`, params: ids }
  }

  /**
   * Checks a `nodeId` given in a request body: it must be a node of this workspace that the
   * credential reaches (422 invalid_node otherwise). null means the credential's own top:
   * root for a workspace-wide credential, its pinned node for a pinned one.
   */
  async resolveHome(p: Principal, nodeId: string | null | undefined): Promise<string | null> {
    if (nodeId === undefined || nodeId === null) return p.nodeId
    const r = await this.row(p.workspaceId, nodeId)
    if (!r || !(await this.reaches(p, nodeId))) throw new ApiError('invalid_node', `nodeId ${JSON.stringify(nodeId)} is not a location in this workspace.`)
    return nodeId
  }

  private async view(r: NodeRow): Promise<NodeView> {
    const lineage = await this.lineage(r.workspace_id, r.id)
    return {
      id: r.id,
      parentId: r.parent_id,
      kind: r.kind,
      name: r.name,
      path: lineage.reverse(),
      geo: r.geo ? (JSON.parse(r.geo) as { lat: number; lon: number }) : null,
      geocodes: r.geocodes ? (JSON.parse(r.geocodes) as string[]) : [],
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }
  }

  async get(p: Principal, id: string): Promise<NodeView> {
    const r = await this.row(p.workspaceId, id)
    if (!r || !(await this.reaches(p, id))) throw notFound('No such location.')
    return this.view(r)
  }

  async list(p: Principal, page: PageRequest, filter: { parentId?: string | undefined; search?: string | undefined }): Promise<Page<NodeView>> {
    const f = {
      scopeIds: await this.scopeIds(p),
      ...(filter.parentId !== undefined ? { parentId: filter.parentId === '' || filter.parentId === 'root' ? null : filter.parentId } : {}),
      ...(filter.search ? { search: filter.search } : {}),
    }
    const total = page.count ? await this.repo.count(p.workspaceId, f) : undefined
    const rows = (await this.repo.list(p.workspaceId, f, page)) as NodeRow[]
    const views: NodeView[] = []
    for (const r of rows) views.push(await this.view(r))
    const byId = new Map(views.map((v) => [v.id, v]))
    return pageOf(rows, page, (r) => byId.get(r.id)!, total)
  }

  async create(p: Principal, input: { name: string; kind: NodeKind; parentId?: string | null }): Promise<NodeView> {
    const name = cleanName(input.name)
    const parentId = await this.resolveHome(p, input.parentId)
    const now = this.clock.now().toISOString()
    const id = this.ids.next('node')
    await this.repo.insert({
      id,
      workspace_id: p.workspaceId,
      parent_id: parentId,
      kind: input.kind,
      name,
      created_at: now,
      updated_at: now,
      geo: null,
      geocodes: null,
    })
    return this.get(p, id)
  }

  /** Every location's parent, point and geocodes, by id (the CAP feeds' area matching). */
  async geoOf(workspaceId: string): Promise<Map<string, { parentId: string | null; geo: { lat: number; lon: number } | null; geocodes: string[] }>> {
    const out = new Map<string, { parentId: string | null; geo: { lat: number; lon: number } | null; geocodes: string[] }>()
    for (const r of await this.repo.geoRows(workspaceId)) {
      out.set(r.id, {
        parentId: r.parent_id,
        geo: r.geo ? (JSON.parse(r.geo) as { lat: number; lon: number }) : null,
        geocodes: r.geocodes ? (JSON.parse(r.geocodes) as string[]) : [],
      })
    }
    return out
  }

  async update(
    p: Principal,
    id: string,
    input: { name?: string; parentId?: string | null; kind?: NodeKind; geo?: { lat: number; lon: number } | null; geocodes?: string[] },
  ): Promise<NodeView> {
    const current = await this.get(p, id)
    const name = input.name !== undefined ? cleanName(input.name) : current.name
    let parentId = current.parentId
    if (input.parentId !== undefined) {
      if (p.nodeId === id) throw new ApiError('forbidden', 'A credential cannot move the location it is pinned to.')
      if (input.parentId === null) {
        if (p.nodeId !== null) throw new ApiError('invalid_node', 'A pinned credential cannot move a location to the workspace root.')
        parentId = null
      } else {
        parentId = await this.resolveHome(p, input.parentId)
        if (parentId && (await this.lineage(p.workspaceId, parentId)).includes(id)) {
          throw validation('parentId would put the location inside itself.')
        }
      }
    }
    const geocodes = input.geocodes === undefined ? undefined : [...new Set(input.geocodes.map((g) => g.trim()).filter(Boolean))]
    for (const g of geocodes ?? [])
      if (!/^[^:\s]{1,40}:\S{1,60}$/.test(g)) throw validation(`geocodes: ${JSON.stringify(g)} is not "valueName:value" (e.g. "SAME:006037").`)
    await this.repo.update(p.workspaceId, id, {
      name,
      parent_id: parentId,
      kind: input.kind ?? current.kind,
      updated_at: this.clock.now().toISOString(),
      ...(input.geo !== undefined ? { geo: input.geo === null ? null : JSON.stringify({ lat: input.geo.lat, lon: input.geo.lon }) } : {}),
      ...(geocodes !== undefined ? { geocodes: geocodes.length ? JSON.stringify(geocodes) : null } : {}),
    })
    return this.get(p, id)
  }

  async remove(p: Principal, id: string): Promise<{ id: string; deleted: true }> {
    await this.get(p, id)
    if (p.nodeId === id) throw new ApiError('forbidden', 'A credential cannot delete the location it is pinned to.')
    const children = await this.repo.childCount(p.workspaceId, id)
    if (children > 0) throw new ApiError('node_not_empty', `This location still has ${children} location(s) under it; move or delete them first.`)
    for (const usage of this.usage.all()) {
      const u = await usage(p.workspaceId, id)
      if (u && u.count > 0) throw new ApiError('node_not_empty', `This location still holds ${u.count} ${u.what}; move or delete them first.`)
    }
    await this.db.transaction(async (tx) => {
      for (const r of this.removal.all()) await r(tx, p.workspaceId, id)
      await this.repo.delete(p.workspaceId, id, tx.kysely)
    })
    return { id, deleted: true }
  }
}

export function cleanName(raw: string, max = 120): string {
  const name = raw.trim()
  if (!name) throw validation('name must not be empty.')
  return name.slice(0, max)
}
