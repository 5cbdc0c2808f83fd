// The owner of screen_tags, screen_groups and group_screens, and the rule compiler: a rule
// becomes one SQL condition on a `screens` row (IN the screens holding a tag, EXISTS on the tags for a prefix, the location's subtree as
// an IN list, the agent version's numbers read by each engine's string functions), so the
// screens a rule selects are one query on either engine. It reads the screens table in
// those conditions, as the screen list reads the screenshots.
import { sql, type RawBuilder, type Selectable } from 'kysely'
import type { Dialect, Executor } from '../../platform/db/Database.js'
import { announce } from '../../platform/db/changes.js'
import { withinNodes } from '../../platform/db/keyset.js'
import type { PageRequest } from '../../platform/paging.js'
import type { Condition, Rule, VersionOp } from './rules.js'
import type { ScreenGroupsTable } from './tables.js'

export type GroupRow = Selectable<ScreenGroupsTable>

/** What a rule's `{group}` and `{nodeId}` stand for, resolved before the rule becomes SQL. */
export interface RuleContext {
  dialect: Dialect
  /** The workspace whose screens the rule selects (a `tag` condition reads its tags by the tag). */
  workspaceId: string
  /** The location and every location under it, per `nodeId` the rule names. */
  subtrees: ReadonlyMap<string, readonly string[]>
  /** Every group the rule names, directly or through another group's rule. */
  groups: ReadonlyMap<string, { kind: string; rule: Rule | null }>
}

/** A member as previews and member pages show it. */
export interface MemberRow {
  id: string
  name: string
  node_id: string | null
  status: string
  agent_version: string | null
}

const FALSE = sql<boolean>`(1 = 0)`
const TRUE = sql<boolean>`(1 = 1)`
const CHUNK = 400

/** `*` any text, every other character itself, any case (ASCII): a LIKE pattern with `\` as escape. */
export function globPattern(glob: string): string {
  return glob
    .toLowerCase()
    .replace(/[\\%_]/g, (c) => `\\${c}`)
    .replace(/\*/g, '%')
}

const OP_SQL: Record<VersionOp, string> = { lt: '<', lte: '<=', gt: '>', gte: '>=' }

/**
 * The agent version's three numbers as SQL, and on SQLite the guard that says the version is
 * `x.y.z…` (each number 1–9 digits): PostgreSQL's parts are null when it is not, SQLite's
 * only mean something under the guard, which is evaluated once per comparison rather than
 * once per part (the string functions it takes were most of a version rule's cost).
 */
function versionParts(dialect: Dialect): { guard: RawBuilder<boolean> | null; parts: [RawBuilder<number>, RawBuilder<number>, RawBuilder<number>] } {
  if (dialect === 'postgres') {
    const part = (re: string) => sql<number>`CAST(substring(screens.agent_version from ${re}) AS BIGINT)`
    return {
      guard: null,
      parts: [
        part('^([0-9]{1,9})\\.[0-9]{1,9}\\.[0-9]{1,9}([^0-9]|$)'),
        part('^[0-9]{1,9}\\.([0-9]{1,9})\\.[0-9]{1,9}([^0-9]|$)'),
        part('^[0-9]{1,9}\\.[0-9]{1,9}\\.([0-9]{1,9})([^0-9]|$)'),
      ],
    }
  }
  // SQLite has no regular expressions: the parts are cut at the dots and checked to be 1–9 digits.
  const v = sql`screens.agent_version`
  const r1 = sql`substr(${v}, instr(${v}, '.') + 1)`
  const maj = sql`substr(${v}, 1, instr(${v}, '.') - 1)`
  const min = sql`substr(${r1}, 1, instr(${r1}, '.') - 1)`
  const r2 = sql`substr(${r1}, instr(${r1}, '.') + 1)`
  const digits = (p: RawBuilder<unknown>) => sql`(length(${p}) BETWEEN 1 AND 9 AND ${p} NOT GLOB '*[^0-9]*')`
  const guard = sql<boolean>`(instr(${v}, '.') > 0 AND ${digits(maj)} AND instr(${r1}, '.') > 0 AND ${digits(min)} AND ${r2} GLOB '[0-9]*' AND ${r2} NOT GLOB '[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]*')`
  const part = (p: RawBuilder<unknown>) => sql<number>`CAST(${p} AS INTEGER)`
  return { guard, parts: [part(maj), part(min), part(r2)] }
}

/**
 * The SQL condition on a `screens` row (the table not aliased) for a condition; true or
 * false, never null, so `not` is the complement.
 */
export function predicate(c: Condition, ctx: RuleContext, seen: readonly string[] = []): RawBuilder<boolean> {
  const strict = (b: RawBuilder<unknown>) => sql<boolean>`(COALESCE(${b}, ${FALSE}))`
  if ('all' in c)
    return c.all.length
      ? sql<boolean>`(${sql.join(
          c.all.map((x) => predicate(x, ctx, seen)),
          sql` AND `,
        )})`
      : TRUE
  if ('any' in c)
    return c.any.length
      ? sql<boolean>`(${sql.join(
          c.any.map((x) => predicate(x, ctx, seen)),
          sql` OR `,
        )})`
      : FALSE
  if ('not' in c) return sql<boolean>`(NOT ${predicate(c.not, ctx, seen)})`
  // The screens holding the tag, read once from screen_tags_tag (workspace, tag → screen ids)
  // rather than probed screen by screen: a cast to a tag group evaluates it for the count and
  // again for the write, and on SQLite the probes per screen were most of its extra cost.
  if ('tag' in c) return sql<boolean>`screens.id IN (SELECT st.screen_id FROM screen_tags st WHERE st.workspace_id = ${ctx.workspaceId} AND st.tag = ${c.tag})`
  if ('tagPrefix' in c)
    return sql<boolean>`EXISTS (SELECT 1 FROM screen_tags st WHERE st.screen_id = screens.id AND substr(st.tag, 1, ${c.tagPrefix.length}) = ${c.tagPrefix})`
  if ('name' in c) return sql<boolean>`(lower(screens.name) LIKE ${globPattern(c.name)} ESCAPE '\\')`
  if ('panelProtocol' in c) return strict(sql`screens.panel_protocol = ${c.panelProtocol}`)
  if ('nodeId' in c) {
    const ids = ctx.subtrees.get(c.nodeId) ?? []
    return ids.length ? strict(sql`screens.node_id IN (${sql.join([...ids])})`) : FALSE
  }
  if ('agentVersion' in c) {
    const {
      guard,
      parts: [a, b, d],
    } = versionParts(ctx.dialect)
    const parts = Object.entries(c.agentVersion).map(([op, ver]) => {
      const [x, y, z] = ver!.split('.').map(Number)
      const compare = sql`(${a}, ${b}, ${d}) ${sql.raw(OP_SQL[op as VersionOp])} (${x}, ${y}, ${z})`
      return strict(guard ? sql`(CASE WHEN ${guard} THEN ${compare} END)` : compare)
    })
    return sql<boolean>`(${sql.join(parts, sql` AND `)})`
  }
  // { group }
  const g = ctx.groups.get(c.group)
  if (!g || seen.includes(c.group)) return FALSE
  if (g.kind === 'static') return sql<boolean>`EXISTS (SELECT 1 FROM group_screens gs WHERE gs.group_id = ${c.group} AND gs.screen_id = screens.id)`
  return g.rule ? predicate(g.rule, ctx, [...seen, c.group]) : FALSE
}

/** What picks screens: the workspace, the credential's reach (null = all), and a condition. */
export interface Selection {
  workspaceId: string
  scopeIds: readonly string[] | null
  where: RawBuilder<boolean>
}

export class TargetingRepository {
  constructor(private readonly k: Executor) {}

  private screens(s: Selection, k: Executor = this.k) {
    return withinNodes(k.selectFrom('screens').where('workspace_id', '=', s.workspaceId), 'node_id', s.scopeIds as string[] | null).where(s.where)
  }

  // ---- tags ----

  /** The tags of these screens (lower case, sorted), by screen. */
  async tagsOf(workspaceId: string, screenIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(screenIds.map((id) => [id, []]))
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      const rows = await this.k
        .selectFrom('screen_tags')
        .select(['screen_id', 'tag'])
        .where('workspace_id', '=', workspaceId)
        .where('screen_id', 'in', screenIds.slice(i, i + CHUNK))
        .orderBy('tag')
        .execute()
      for (const r of rows) out.get(r.screen_id)?.push(r.tag)
    }
    return out
  }

  /** Replaces a screen's tags. */
  async setTags(workspaceId: string, screenId: string, tags: readonly string[], k: Executor = this.k): Promise<void> {
    await k.deleteFrom('screen_tags').where('screen_id', '=', screenId).where('workspace_id', '=', workspaceId).execute()
    if (tags.length)
      await k
        .insertInto('screen_tags')
        .values(tags.map((tag) => ({ screen_id: screenId, workspace_id: workspaceId, tag })))
        .execute()
    announce(k, { kind: 'workspaceScreens', workspaceId })
  }

  /** Screens of the selection that would hold more than `max` tags after the change. */
  async overLimit(s: Selection, add: readonly string[], remove: readonly string[], max: number, k: Executor = this.k): Promise<string | null> {
    const gone = [...new Set([...add, ...remove])]
    const kept = gone.length
      ? sql<number>`(SELECT COUNT(*) FROM screen_tags t WHERE t.screen_id = screens.id AND t.tag NOT IN (${sql.join(gone)}))`
      : sql<number>`(SELECT COUNT(*) FROM screen_tags t WHERE t.screen_id = screens.id)`
    const r = await this.screens(s, k).select('id').where(sql<boolean>`${kept} + ${add.length} > ${max}`).orderBy('id').limit(1).executeTakeFirst()
    return r?.id ?? null
  }

  /**
   * Adds and removes tags on every screen of the selection, set-based; answers how many it
   * selected and the ids of those whose tags changed.
   */
  async bulkTag(s: Selection, add: readonly string[], remove: readonly string[], k: Executor): Promise<{ matched: number; changed: string[] }> {
    const has = (tag: string) => sql<boolean>`EXISTS (SELECT 1 FROM screen_tags t WHERE t.screen_id = screens.id AND t.tag = ${tag})`
    const differs = [...add.map((t) => sql<boolean>`NOT ${has(t)}`), ...remove.map((t) => has(t))]
    const matched = Number(
      (
        await this.screens(s, k)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
    const changed = differs.length
      ? (
          await this.screens(s, k)
            .select('id')
            .where(sql<boolean>`(${sql.join(differs, sql` OR `)})`)
            .orderBy('id')
            .execute()
        ).map((r) => r.id)
      : []
    if (!changed.length) return { matched, changed }
    if (remove.length) {
      await k
        .deleteFrom('screen_tags')
        .where('workspace_id', '=', s.workspaceId)
        .where('tag', 'in', [...remove])
        .where('screen_id', 'in', this.screens(s, k).select('id'))
        .execute()
    }
    for (const tag of add) {
      await k
        .insertInto('screen_tags')
        .columns(['screen_id', 'workspace_id', 'tag'])
        .expression(
          this.screens(s, k)
            .select((eb) => ['id', 'workspace_id', eb.val(tag).as('tag')])
            .where(sql<boolean>`NOT ${has(tag)}`),
        )
        .execute()
    }
    announce(k, { kind: 'workspaceScreens', workspaceId: s.workspaceId })
    return { matched, changed }
  }

  /** The tags in use on the screens the credential reaches, with how many screens hold each. */
  async tagCounts(workspaceId: string, scopeIds: readonly string[] | null): Promise<{ tag: string; count: number }[]> {
    const rows = await withinNodes(
      this.k
        .selectFrom('screen_tags as t')
        .innerJoin('screens', 'screens.id', 't.screen_id')
        .where('t.workspace_id', '=', workspaceId)
        .where('screens.workspace_id', '=', workspaceId),
      'screens.node_id',
      scopeIds as string[] | null,
    )
      .select((eb) => ['t.tag', eb.fn.countAll<number>().as('n')])
      .groupBy('t.tag')
      .orderBy('t.tag')
      .execute()
    return rows.map((r) => ({ tag: r.tag, count: Number(r.n) }))
  }

  /** Tag rows whose screen is gone (screens are deleted by their own domain). */
  async purgeOrphans(): Promise<number> {
    const a = await this.k
      .deleteFrom('screen_tags')
      .where(sql<boolean>`NOT EXISTS (SELECT 1 FROM screens s WHERE s.id = screen_tags.screen_id)`)
      .executeTakeFirst()
    const b = await this.k
      .deleteFrom('group_screens')
      .where(sql<boolean>`NOT EXISTS (SELECT 1 FROM screens s WHERE s.id = group_screens.screen_id)`)
      .executeTakeFirst()
    return Number(a.numDeletedRows) + Number(b.numDeletedRows)
  }

  // ---- selections ----

  /** The screens of a selection, in id order (the members' page, or all of them). */
  members(s: Selection, page: PageRequest): Promise<MemberRow[]> {
    let q = this.screens(s).select(['id', 'name', 'node_id', 'status', 'agent_version'])
    if (page.after) q = q.where('id', '>', page.after)
    q = q.orderBy('id')
    if (page.limit !== null) q = q.limit(page.limit + 1)
    return q.execute()
  }

  async count(s: Selection): Promise<number> {
    const r = await this.screens(s)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** Which of `ids` are screens of the selection. */
  async existing(s: Selection, ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>()
    for (let i = 0; i < ids.length; i += CHUNK) {
      for (const r of await this.screens(s)
        .select('id')
        .where('id', 'in', ids.slice(i, i + CHUNK))
        .execute())
        out.add(r.id)
    }
    return out
  }

  // ---- groups ----

  group(workspaceId: string, id: string): Promise<GroupRow | undefined> {
    return this.k.selectFrom('screen_groups').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst()
  }

  groupsIn(workspaceId: string, ids: readonly string[]): Promise<GroupRow[]> {
    if (!ids.length) return Promise.resolve([])
    return this.k
      .selectFrom('screen_groups')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', [...ids])
      .execute()
  }

  /** A page of the groups homed within `scopeIds` (null = all), by id. */
  listGroups(workspaceId: string, scopeIds: readonly string[] | null, page: PageRequest): Promise<GroupRow[]> {
    let q = this.k.selectFrom('screen_groups').selectAll().where('workspace_id', '=', workspaceId)
    if (scopeIds !== null) q = scopeIds.length ? q.where('node_id', 'in', [...scopeIds]) : q.where(FALSE)
    if (page.after) q = q.where('id', '>', page.after)
    q = q.orderBy('id')
    if (page.limit !== null) q = q.limit(page.limit + 1)
    return q.execute()
  }

  async countGroups(workspaceId: string, scopeIds: readonly string[] | null): Promise<number> {
    let q = this.k.selectFrom('screen_groups').where('workspace_id', '=', workspaceId)
    if (scopeIds !== null) q = scopeIds.length ? q.where('node_id', 'in', [...scopeIds]) : q.where(FALSE)
    return Number((await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
  }

  /** Dynamic groups of the workspace with their rules (to find which name a group). */
  dynamicGroups(workspaceId: string): Promise<{ id: string; name: string; rule: string | null }[]> {
    return this.k.selectFrom('screen_groups').select(['id', 'name', 'rule']).where('workspace_id', '=', workspaceId).where('kind', '=', 'dynamic').execute()
  }

  /** A static group's screen ids, within the credential's reach (null = all). */
  async staticMembers(workspaceId: string, groupId: string, scopeIds: readonly string[] | null): Promise<string[]> {
    const rows = await withinNodes(
      this.k
        .selectFrom('group_screens as g')
        .innerJoin('screens', 'screens.id', 'g.screen_id')
        .where('g.group_id', '=', groupId)
        .where('screens.workspace_id', '=', workspaceId),
      'screens.node_id',
      scopeIds as string[] | null,
    )
      .select('g.screen_id')
      .orderBy('g.screen_id')
      .execute()
    return rows.map((r) => r.screen_id)
  }

  async insertGroup(row: GroupRow, screenIds: readonly string[] | null, k: Executor): Promise<void> {
    await k.insertInto('screen_groups').values(row).execute()
    if (screenIds) await this.addMembers(row.id, screenIds, k)
  }

  async updateGroup(workspaceId: string, id: string, set: Partial<Omit<GroupRow, 'id' | 'workspace_id'>>, k: Executor): Promise<void> {
    await k.updateTable('screen_groups').set(set).where('workspace_id', '=', workspaceId).where('id', '=', id).execute()
  }

  /** Replaces a static group's members, keeping `keep` (members the writer cannot see). */
  async replaceMembers(id: string, screenIds: readonly string[], keep: readonly string[], k: Executor): Promise<void> {
    await k.deleteFrom('group_screens').where('group_id', '=', id).execute()
    await this.addMembers(id, [...new Set([...screenIds, ...keep])], k)
  }

  private async addMembers(id: string, screenIds: readonly string[], k: Executor): Promise<void> {
    for (let i = 0; i < screenIds.length; i += CHUNK)
      await k
        .insertInto('group_screens')
        .values(screenIds.slice(i, i + CHUNK).map((screen_id) => ({ group_id: id, screen_id })))
        .execute()
  }

  async deleteGroup(workspaceId: string, id: string, k: Executor): Promise<void> {
    await k.deleteFrom('group_screens').where('group_id', '=', id).execute()
    await k.deleteFrom('screen_groups').where('workspace_id', '=', workspaceId).where('id', '=', id).execute()
  }
}
