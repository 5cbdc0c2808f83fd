// Tags: labels on screens (`format:kiosk`, `floor:2`), lower case, at most 50 per screen.
// A screen's tags are replaced with PATCH /v1/screens/<id>; bulk-tag adds and removes them on
// many screens at once, chosen as every other write chooses its screens (screens/targets.ts).
import type { RawBuilder } from 'kysely'
import { sql } from 'kysely'
import type { Database } from '../../platform/db/Database.js'
import type { Principal } from '../../platform/http/Principal.js'
import type { Listeners } from '../../platform/hooks.js'
import { validation } from '../../platform/errors.js'
import type { NodeService } from '../nodes/index.js'
import { resolveSelection, type ScreenService, type TargetScope } from '../screens/index.js'
import type { GroupService } from './GroupService.js'
import { cleanTags, MAX_TAGS_PER_SCREEN } from './rules.js'
import { TargetingRepository, type Selection } from './TargetingRepository.js'

/** Screens one bulk-tag request may change. */
export const BULK_TAG_MAX = 10_000
/** Tags one bulk-tag request may add or remove. */
export const BULK_TAG_TAGS = 50

/** Told when screens' tags changed (after the change committed): workspace, screen ids. */
export type TagChange = (workspaceId: string, screenIds: readonly string[]) => void

export interface BulkTagInput {
  screenIds?: string[] | undefined
  nodeId?: string | undefined
  groupId?: string | undefined
  add?: string[] | undefined
  remove?: string[] | undefined
}

export class TagService {
  private readonly repo: TargetingRepository
  private readonly reads: TargetingRepository

  constructor(
    private readonly db: Database,
    private readonly nodes: NodeService,
    private readonly screens: Pick<ScreenService, 'get'>,
    private readonly groups: GroupService,
    private readonly changes: Listeners<TagChange>,
  ) {
    this.repo = new TargetingRepository(db.kysely)
    this.reads = new TargetingRepository(db.reads)
  }

  /** The tags of these screens of the workspace (sorted), by screen id. */
  tagsOf(workspaceId: string, screenIds: readonly string[]): Promise<Map<string, string[]>> {
    return this.repo.tagsOf(workspaceId, screenIds)
  }

  /** Replaces a screen's tags (404 for a screen the credential does not reach). */
  async set(p: Principal, screenId: string, tags: readonly unknown[]): Promise<string[]> {
    const clean = cleanTags(tags)
    if (clean.length > MAX_TAGS_PER_SCREEN) throw validation(`tags: at most ${MAX_TAGS_PER_SCREEN} per screen.`)
    await this.screens.get(p, screenId)
    const before = (await this.repo.tagsOf(p.workspaceId, [screenId])).get(screenId) ?? []
    await this.db.transaction((tx) => this.repo.setTags(p.workspaceId, screenId, clean, tx.kysely))
    const after = [...clean].sort()
    if (before.join('\n') !== after.join('\n')) this.changed(p.workspaceId, [screenId])
    return after
  }

  /** Adds and removes tags on many screens: `screenIds`, a location's subtree or a group's members. */
  async bulk(p: Principal, input: BulkTagInput): Promise<{ matched: number; changed: number }> {
    const given = [input.screenIds, input.nodeId, input.groupId].filter((v) => v !== undefined).length
    if (given !== 1) throw validation('Send one of screenIds, nodeId or groupId.')
    const add = cleanTags(input.add ?? [], 'add')
    const remove = cleanTags(input.remove ?? [], 'remove')
    if (!add.length && !remove.length) throw validation('Send the tags to add or to remove.')
    const both = add.find((t) => remove.includes(t))
    if (both !== undefined) throw validation(`${JSON.stringify(both)} is both in add and in remove.`)
    const scope: TargetScope =
      input.screenIds !== undefined
        ? { scopeKind: 'screens', screenIds: input.screenIds }
        : input.nodeId !== undefined
          ? { scopeKind: 'node', scopeNodeId: input.nodeId }
          : { scopeKind: 'group', groupId: input.groupId }
    const { filter } = await resolveSelection(this.nodes, p, scope, { max: BULK_TAG_MAX, nodeField: 'nodeId', groups: this.groups })
    const parts: RawBuilder<boolean>[] = []
    if (filter.ids) parts.push(sql<boolean>`screens.id IN (${sql.join(filter.ids)})`)
    if (filter.nodeIds) parts.push(filter.nodeIds.length ? sql<boolean>`screens.node_id IN (${sql.join(filter.nodeIds)})` : sql<boolean>`(1 = 0)`)
    if (filter.where) parts.push(filter.where)
    const sel: Selection = {
      workspaceId: p.workspaceId,
      scopeIds: filter.scopeIds,
      where: parts.length ? sql<boolean>`(${sql.join(parts, sql` AND `)})` : sql<boolean>`(1 = 1)`,
    }
    const out = await this.db.transaction(async (tx) => {
      const over = await this.repo.overLimit(sel, add, remove, MAX_TAGS_PER_SCREEN, tx.kysely)
      if (over) throw validation(`Screen ${over} would hold more than ${MAX_TAGS_PER_SCREEN} tags.`)
      const r = await this.repo.bulkTag(sel, add, remove, tx.kysely)
      if (r.matched > BULK_TAG_MAX) throw validation(`The target holds ${r.matched} screens; at most ${BULK_TAG_MAX} per request.`)
      return r
    })
    if (out.changed.length) this.changed(p.workspaceId, out.changed)
    return { matched: out.matched, changed: out.changed.length }
  }

  /** The tags in use on the screens the credential reaches, with how many hold each. */
  async list(p: Principal): Promise<{ tag: string; count: number }[]> {
    return this.reads.tagCounts(p.workspaceId, await this.nodes.scopeIds(p))
  }

  /** The condition GET /v1/screens narrows to: every tag given, and a group's members. */
  async listCondition(p: Principal, q: { tag?: string | string[] | undefined; group?: string | undefined }): Promise<RawBuilder<boolean> | undefined> {
    const tags = q.tag === undefined ? [] : cleanTags(Array.isArray(q.tag) ? q.tag : [q.tag], 'tag')
    const conds: RawBuilder<boolean>[] = []
    if (tags.length) conds.push(await this.groups.condition(p, { all: tags.map((tag) => ({ tag })) }, 'tag'))
    if (q.group !== undefined) conds.push(await this.groups.memberCondition(p, q.group, 'group'))
    return conds.length ? sql<boolean>`(${sql.join(conds, sql` AND `)})` : undefined
  }

  /** Tag rows and static members whose screen is gone (housekeeping). */
  purgeOrphans(): Promise<number> {
    return this.repo.purgeOrphans()
  }

  private changed(workspaceId: string, screenIds: readonly string[]): void {
    for (const l of this.changes.all()) l(workspaceId, screenIds)
  }
}
