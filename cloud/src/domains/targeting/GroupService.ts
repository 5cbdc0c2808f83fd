// Groups: named sets of screens beside the location tree. A static group lists its screens;
// a dynamic one holds a rule (rules.ts) that is compiled to one SQL condition each time the
// group is used, so membership follows the screens as they change. A group has a home
// location: a pinned credential sees the groups homed inside its subtree and, of any group,
// only the members it reaches.
import { sql, type RawBuilder } from 'kysely'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import type { Principal } from '../../platform/http/Principal.js'
import { Listeners } from '../../platform/hooks.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import { encodeCursor, type Page, type PageRequest } from '../../platform/paging.js'
import { cleanName, type NodeService } from '../nodes/index.js'
import type { GroupConditions } from '../screens/index.js'
import { namesIn, parseRule, type Condition, type Rule } from './rules.js'
import { predicate, TargetingRepository, type GroupRow, type MemberRow, type RuleContext, type Selection } from './TargetingRepository.js'

export const GROUP_KINDS = ['static', 'dynamic'] as const
export type GroupKind = (typeof GROUP_KINDS)[number]
/** Screens a static group may list. */
export const STATIC_GROUP_MAX = 10_000
export const PREVIEW_SCREENS = 20
const sqlTrue = sql<boolean>`(1 = 1)`

export interface GroupView {
  id: string
  name: string
  nodeId: string | null
  kind: GroupKind
  /** A static group's screens (those the credential reaches); null for a dynamic group. */
  screenIds: string[] | null
  /** A dynamic group's rule; null for a static group. */
  rule: Rule | null
  memberCount: number
  createdAt: string
  updatedAt: string
}

export interface MemberView {
  id: string
  name: string
  nodeId: string | null
  status: string
  agentVersion: string | null
}

export interface GroupInput {
  name?: string | undefined
  nodeId?: string | null | undefined
  kind?: GroupKind | undefined
  screenIds?: string[] | undefined
  rule?: unknown
}

/** Told when a group's definition changes (its members may differ): workspace, group id. */
export type GroupChange = (workspaceId: string, groupId: string) => void

/** What another domain keeps aimed at a group (an alert rule's scope), so deleting a used group is refused. */
export type GroupUsage = (workspaceId: string, groupId: string) => Promise<{ what: string; count: number } | null>

const memberView = (r: MemberRow): MemberView => ({ id: r.id, name: r.name, nodeId: r.node_id, status: r.status, agentVersion: r.agent_version })

export class GroupService implements GroupConditions {
  private readonly repo: TargetingRepository
  private readonly reads: TargetingRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly changes: Listeners<GroupChange>,
    private readonly usage: Listeners<GroupUsage> = new Listeners(),
  ) {
    this.repo = new TargetingRepository(db.kysely)
    this.reads = new TargetingRepository(db.reads)
  }

  /** The group when the credential sees it (homed inside its reach), else undefined. */
  private async visible(p: Principal, id: string): Promise<GroupRow | undefined> {
    const g = await this.repo.group(p.workspaceId, id)
    return g && (await this.nodes.reaches(p, g.node_id)) ? g : undefined
  }

  private async row(p: Principal, id: string): Promise<GroupRow> {
    const g = await this.visible(p, id)
    if (!g) throw notFound('No such group.')
    return g
  }

  /**
   * Resolves what a rule names: every location (checked against the credential: 422
   * invalid_node outside it) and every group, through the groups' own rules (422 for a group
   * the credential does not see, whichever workspace it is in). `self`: the group being
   * written, which the rule must not reach (a cycle).
   */
  async context(p: Principal, rule: Condition, field = 'rule', self?: string): Promise<RuleContext> {
    const subtrees = new Map<string, string[]>()
    const groups = new Map<string, { kind: string; rule: Rule | null }>()
    const direct = namesIn(rule)
    for (const nodeId of direct.nodes) {
      const home = await this.nodes.resolveHome(p, nodeId).catch(() => {
        throw new ApiError('invalid_node', `${field}: nodeId ${JSON.stringify(nodeId)} is not a location in this workspace.`)
      })
      subtrees.set(nodeId, await this.nodes.subtree(p.workspaceId, home!))
    }
    for (const id of direct.groups) {
      if (id === self) throw validation(`${field}: a group's rule cannot name the group itself (a cycle).`)
      if (!(await this.visible(p, id))) throw validation(`${field}: group ${JSON.stringify(id)} is not a group of this workspace.`)
    }
    // The groups named, and the groups their rules name, breadth first.
    let pending = [...direct.groups]
    const via = new Map<string, string>()
    while (pending.length) {
      const rows = await this.repo.groupsIn(
        p.workspaceId,
        pending.filter((id) => !groups.has(id)),
      )
      pending = []
      for (const g of rows) {
        const r = g.kind === 'dynamic' && g.rule ? (JSON.parse(g.rule) as Rule) : null
        groups.set(g.id, { kind: g.kind, rule: r })
        if (!r) continue
        const inner = namesIn(r)
        for (const nodeId of inner.nodes) if (!subtrees.has(nodeId)) subtrees.set(nodeId, await this.nodes.subtree(p.workspaceId, nodeId))
        for (const id of inner.groups) {
          if (self !== undefined && id === self)
            throw validation(`${field}: group ${JSON.stringify(via.get(g.id) ?? g.id)} leads back to this group through ${JSON.stringify(g.id)} (a cycle).`)
          if (!groups.has(id)) {
            via.set(id, via.get(g.id) ?? g.id)
            pending.push(id)
          }
        }
      }
    }
    return { dialect: this.db.dialect, workspaceId: p.workspaceId, subtrees, groups }
  }

  /** The rule's condition on a `screens` row. */
  async condition(p: Principal, rule: Rule, field = 'rule'): Promise<RawBuilder<boolean>> {
    return predicate(rule, await this.context(p, rule, field))
  }

  /** The members of a group the credential sees, as a condition on a `screens` row (the writes' group targets). */
  async memberCondition(p: Principal, groupId: string, field: string): Promise<RawBuilder<boolean>> {
    const g = await this.visible(p, groupId)
    if (!g) throw validation(`${field}: ${JSON.stringify(groupId)} is not a group of this workspace.`)
    return this.condition(p, { all: [{ group: g.id }] }, field)
  }

  /**
   * Of `screenIds`, those in the group as a credential homed at `nodeId` sees it: the members
   * of a standing target decided without a caller (an alert rule's group scope), through the
   * same condition every write's group target uses. Empty when the group is gone or outside
   * that home.
   */
  async membersAmong(workspaceId: string, groupId: string, nodeId: string | null, screenIds: readonly string[]): Promise<Set<string>> {
    if (!screenIds.length) return new Set()
    const p: Principal = { actor: { kind: 'key', id: null, name: 'targeting', nodeId }, workspaceId, grant: 'all', nodeId }
    const g = await this.visible(p, groupId)
    if (!g) return new Set()
    return this.reads.existing(await this.selection(p, g), screenIds)
  }

  private async selection(p: Principal, g: GroupRow): Promise<Selection> {
    return { workspaceId: p.workspaceId, scopeIds: await this.nodes.scopeIds(p), where: await this.condition(p, { all: [{ group: g.id }] }) }
  }

  private async view(p: Principal, g: GroupRow): Promise<GroupView> {
    const scopeIds = await this.nodes.scopeIds(p)
    const sel = await this.selection(p, g)
    return {
      id: g.id,
      name: g.name,
      nodeId: g.node_id,
      kind: g.kind as GroupKind,
      screenIds: g.kind === 'static' ? await this.repo.staticMembers(p.workspaceId, g.id, scopeIds) : null,
      rule: g.kind === 'dynamic' && g.rule ? (JSON.parse(g.rule) as Rule) : null,
      memberCount: await this.repo.count(sel),
      createdAt: g.created_at,
      updatedAt: g.updated_at,
    }
  }

  async get(p: Principal, id: string): Promise<GroupView> {
    return this.view(p, await this.row(p, id))
  }

  async list(p: Principal, page: PageRequest): Promise<Page<GroupView>> {
    const scopeIds = await this.nodes.scopeIds(p)
    const rows = await this.repo.listGroups(p.workspaceId, scopeIds, page)
    const more = page.limit !== null && rows.length > page.limit
    const kept = more ? rows.slice(0, page.limit!) : rows
    const out: Page<GroupView> = { data: [] }
    for (const g of kept) out.data.push(await this.view(p, g))
    if (page.limit !== null) out.nextCursor = more ? encodeCursor(kept[kept.length - 1]!.id) : null
    if (page.count) out.total = await this.repo.countGroups(p.workspaceId, scopeIds)
    return out
  }

  /** A static group's screens: distinct, each a screen the credential reaches (422 naming those that are not). */
  private async checkedScreens(p: Principal, ids: readonly string[]): Promise<string[]> {
    const distinct = [...new Set(ids)]
    if (distinct.length > STATIC_GROUP_MAX) throw validation(`screenIds: at most ${STATIC_GROUP_MAX} screens in a static group.`)
    const found = await this.repo.existing({ workspaceId: p.workspaceId, scopeIds: await this.nodes.scopeIds(p), where: sqlTrue }, distinct)
    const missing = distinct.filter((id) => !found.has(id))
    if (missing.length)
      throw validation(`screenIds: no such screen: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}.`)
    return distinct
  }

  private checkShape(kind: GroupKind, input: GroupInput): void {
    if (kind === 'static' && input.rule !== undefined) throw validation('rule is only used with kind "dynamic".')
    if (kind === 'dynamic' && input.screenIds !== undefined) throw validation('screenIds is only used with kind "static".')
  }

  async create(p: Principal, input: GroupInput & { name: string; kind: GroupKind }): Promise<GroupView> {
    this.checkShape(input.kind, input)
    const nodeId = await this.nodes.resolveHome(p, input.nodeId)
    const id = this.ids.next('group')
    let rule: Rule | null = null
    let screenIds: string[] | null = null
    if (input.kind === 'dynamic') {
      if (input.rule === undefined) throw validation('rule is required when kind is "dynamic".')
      rule = parseRule(input.rule)
      await this.context(p, rule, 'rule', id)
    } else screenIds = await this.checkedScreens(p, input.screenIds ?? [])
    const now = this.clock.now().toISOString()
    await this.db.transaction((tx) =>
      this.repo.insertGroup(
        {
          id,
          workspace_id: p.workspaceId,
          node_id: nodeId,
          name: cleanName(input.name),
          kind: input.kind,
          rule: rule && JSON.stringify(rule),
          created_at: now,
          updated_at: now,
        },
        screenIds,
        tx.kysely,
      ),
    )
    return this.get(p, id)
  }

  async update(p: Principal, id: string, input: GroupInput): Promise<GroupView> {
    const g = await this.row(p, id)
    const kind = (input.kind ?? g.kind) as GroupKind
    this.checkShape(kind, input)
    const nodeId = input.nodeId !== undefined ? await this.nodes.resolveHome(p, input.nodeId) : g.node_id
    let rule: string | null = kind === 'dynamic' ? g.rule : null
    if (input.rule !== undefined) {
      const r = parseRule(input.rule)
      await this.context(p, r, 'rule', id)
      rule = JSON.stringify(r)
    }
    if (kind === 'dynamic' && rule === null) throw validation('rule is required when kind is "dynamic".')
    let members: { ids: string[]; keep: string[] } | null = null
    if (kind === 'static' && (input.screenIds !== undefined || g.kind !== 'static')) {
      const ids = await this.checkedScreens(p, input.screenIds ?? [])
      // Members the writer does not reach stay: it could neither see nor name them.
      const all = g.kind === 'static' ? await this.repo.staticMembers(p.workspaceId, id, null) : []
      const seen = new Set(g.kind === 'static' ? await this.repo.staticMembers(p.workspaceId, id, await this.nodes.scopeIds(p)) : [])
      members = { ids, keep: all.filter((s) => !seen.has(s)) }
    }
    await this.db.transaction(async (tx) => {
      await this.repo.updateGroup(
        p.workspaceId,
        id,
        { name: input.name !== undefined ? cleanName(input.name) : g.name, node_id: nodeId, kind, rule, updated_at: this.clock.now().toISOString() },
        tx.kysely,
      )
      if (members) await this.repo.replaceMembers(id, members.ids, members.keep, tx.kysely)
      else if (kind === 'dynamic' && g.kind === 'static') await this.repo.replaceMembers(id, [], [], tx.kysely)
    })
    this.changed(p.workspaceId, id)
    return this.get(p, id)
  }

  async remove(p: Principal, id: string): Promise<{ id: string; deleted: true }> {
    await this.row(p, id)
    const users = (await this.repo.dynamicGroups(p.workspaceId)).filter((g) => g.rule && namesIn(JSON.parse(g.rule) as Rule).groups.has(id))
    if (users.length)
      throw new ApiError('conflict', `The group is named by the rule of ${users.map((g) => `${g.id} (${g.name})`).join(', ')}; change those rules first.`)
    for (const usage of this.usage.all()) {
      const u = await usage(p.workspaceId, id)
      if (u && u.count > 0) throw new ApiError('conflict', `The group is still in use: ${u.count} ${u.what}; change those first.`)
    }
    await this.db.transaction((tx) => this.repo.deleteGroup(p.workspaceId, id, tx.kysely))
    this.changed(p.workspaceId, id)
    return { id, deleted: true }
  }

  async members(p: Principal, id: string, page: PageRequest): Promise<Page<MemberView>> {
    const sel = await this.selection(p, await this.row(p, id))
    const rows = await this.reads.members(sel, page)
    const more = page.limit !== null && rows.length > page.limit
    const kept = more ? rows.slice(0, page.limit!) : rows
    const out: Page<MemberView> = { data: kept.map(memberView) }
    if (page.limit !== null) out.nextCursor = more ? encodeCursor(kept[kept.length - 1]!.id) : null
    if (page.count) out.total = await this.reads.count(sel)
    return out
  }

  /** What a rule would select now, of the screens the credential reaches; nothing is stored. */
  async preview(p: Principal, value: unknown): Promise<{ count: number; screens: MemberView[] }> {
    const rule = parseRule(value)
    const sel: Selection = { workspaceId: p.workspaceId, scopeIds: await this.nodes.scopeIds(p), where: await this.condition(p, rule) }
    const [count, rows] = await Promise.all([this.reads.count(sel), this.reads.members(sel, { limit: PREVIEW_SCREENS, after: null, count: false })])
    return { count, screens: rows.slice(0, PREVIEW_SCREENS).map(memberView) }
  }

  private changed(workspaceId: string, groupId: string): void {
    for (const l of this.changes.all()) l(workspaceId, groupId)
  }
}
