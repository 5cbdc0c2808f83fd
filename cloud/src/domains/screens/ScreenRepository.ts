// The owner of `screens`: every write to a screen row made by the API side (pairing,
// rename/move, delete, assignment, panel profile, device secret) is a method here. The
// device link (devicelink/*: presence, reported state, desired_version) still writes its
// own columns. Reads for target selection, the list and the content usages live here too.
import { CompiledQuery, sql, type RawBuilder, type Selectable, type SelectQueryBuilder } from 'kysely'
import type { Dialect, Executor } from '../../platform/db/Database.js'
import { announce } from '../../platform/db/changes.js'
import type { DB } from '../../platform/db/schema.js'
import type { ScreensTable } from './tables.js'
import type { PageRequest } from '../../platform/paging.js'
import { withinNodes } from '../../platform/db/keyset.js'

export type ScreenRecord = Selectable<ScreensTable>
export type ScreenPanelRecord = Pick<ScreenRecord, 'panel_protocol' | 'panel_set_id' | 'panel_poll_seconds' | 'panel_port_hint'>
export type ScreenAssignmentRecord = Pick<ScreenRecord, 'id' | 'node_id' | 'content_kind' | 'content_id'>

// Names beside ids: the assigned content's name, and the name and thumbnail of what the
// screen reports playing, read from the content tables by primary key in the screen's own
// workspace (media first, then the other kinds; null when it is gone or never existed).
const nameOf = (id: RawBuilder<unknown>) =>
  sql<
    string | null
  >`COALESCE((SELECT m.name FROM media m WHERE m.id = ${id} AND m.workspace_id = screens.workspace_id), (SELECT ci.name FROM content_items ci WHERE ci.id = ${id} AND ci.workspace_id = screens.workspace_id))`
const thumbnailOf = (id: RawBuilder<unknown>) =>
  sql<
    string | null
  >`(SELECT '/v1/media/' || m.id || '/thumbnail' FROM media m WHERE m.id = ${id} AND m.workspace_id = screens.workspace_id AND m.thumbnail_at IS NOT NULL)`
const PLAYING_ID_SQLITE = sql`json_extract(screens.reported, '$.playing.contentId')`
const PLAYING_ID_PG = sql`(CAST(screens.reported AS JSON)->'playing'->>'contentId')`
const ASSIGNED_ID = sql`screens.content_id`
/** The names' columns for one engine (`screenNames` and the list). */
const nameColumns = (dialect: Dialect) => {
  const playing = dialect === 'postgres' ? PLAYING_ID_PG : PLAYING_ID_SQLITE
  return [nameOf(ASSIGNED_ID).as('content_name'), nameOf(playing).as('playing_name'), thumbnailOf(playing).as('playing_thumbnail_url')] as const
}

const LIST_COLUMNS = [
  'id',
  'name',
  'status',
  'content_kind',
  'content_id',
  'last_seen_at',
  'node_id',
  'agent_version',
  'drift_state',
  'drift_since',
  'drift_items',
  'reported',
  // The newest screenshot that came back (index screenshots_screen), as JSON text.
  sql<
    string | null
  >`(SELECT json_object('id', sh.id, 'at', sh.completed_at) FROM screenshots sh WHERE sh.screen_id = screens.id AND sh.status = 'ok' ORDER BY sh.created_at DESC LIMIT 1)`.as(
    'last_shot',
  ),
  // The screen's tags, sorted, as a JSON array (the targeting domain's screen_tags, by its primary key).
  sql<string>`(SELECT json_group_array(st.tag ORDER BY st.tag) FROM screen_tags st WHERE st.screen_id = screens.id)`.as('tag_list'),
  ...nameColumns('sqlite'),
] as const
/** The same columns named as the list item's fields (PostgreSQL builds each item from its row). */
const LIST_FIELDS = [
  'id',
  'name',
  'status',
  'content_kind as contentKind',
  'content_id as contentId',
  'last_seen_at as lastSeenAt',
  'node_id as nodeId',
  'agent_version as agentVersion',
  sql<unknown>`json_build_object('state', drift_state, 'since', drift_since, 'items', CAST(COALESCE(drift_items, '[]') AS JSON))`.as('drift'),
  sql<unknown>`CAST(reported AS JSON)->'playing'`.as('playing'),
  sql<unknown>`(SELECT json_build_object('id', sh.id, 'at', sh.completed_at) FROM screenshots sh WHERE sh.screen_id = screens.id AND sh.status = 'ok' ORDER BY sh.created_at DESC LIMIT 1)`.as(
    'lastScreenshot',
  ),
  sql<unknown>`(SELECT COALESCE(json_agg(st.tag ORDER BY st.tag), '[]') FROM screen_tags st WHERE st.screen_id = screens.id)`.as('tags'),
  nameOf(ASSIGNED_ID).as('contentName'),
  nameOf(PLAYING_ID_PG).as('playingName'),
  thumbnailOf(PLAYING_ID_PG).as('playingThumbnailUrl'),
] as const
const DRIFT_INPUT_COLUMNS = [
  'id',
  'name',
  'node_id',
  'status',
  'status_since',
  'desired_version',
  'desired_published_at',
  'reported',
  'reported_at',
  'panel_protocol',
  'panel_set_id',
  'drift_state',
  'drift_since',
  'drift_items',
] as const
/** What drift is judged from. */
export type DriftInputRow = Pick<ScreenRecord, (typeof DRIFT_INPUT_COLUMNS)[number]>

/** Ids per statement in IN lists (well under either engine's parameter limit). */
const CHUNK = 400

export interface TargetFilter {
  /** Node ids the credential reaches; null = all. */
  scopeIds: string[] | null
  /** Only these screens (absent = any). */
  ids?: string[]
  /** Only screens homed at these nodes (absent = any). */
  nodeIds?: string[]
  /** Only screens for which this condition on the `screens` row holds (a group's members). */
  where?: RawBuilder<boolean>
}

/** What the desired-state builder reads from a screen. */
export type DesiredScreenRow = Pick<
  Selectable<ScreensTable>,
  'id' | 'node_id' | 'content_kind' | 'content_id' | 'timezone' | 'desired_version' | 'panel_protocol' | 'panel_set_id' | 'panel_poll_seconds'
>

export interface ScreenNames {
  /** The assigned content's name. */
  contentName: string | null
  /** The name of what the screen reports playing. */
  playingName: string | null
  /** The thumbnail of the media the screen reports playing. */
  playingThumbnailUrl: string | null
}

interface ListRow {
  data: string
  /** The page's screen ids, comma-separated (ids never hold a comma). */
  ids: string | null
  n: number | string
  last_id: string | null
  more: number | boolean
}

/** What the screen list can be narrowed to, besides the credential's reach. */
export interface ScreenListFilter {
  /** Only screens in this drift state. */
  drift?: string | undefined
  /** Only screens with this status (`online`, `offline`). */
  status?: string | undefined
  /** Only screens whose name contains this text, any case (a LIKE pattern made by namePattern). */
  search?: string | undefined
  /** Only screens for which this condition on the `screens` row holds (tags, a group). */
  where?: RawBuilder<boolean> | undefined
}

const FILTERS = ['drift', 'status', 'search'] as const
type FilterName = (typeof FILTERS)[number]

/** A LIKE pattern for "name contains `text`", any case: `%`, `_` and `\` in it match themselves. */
export function namePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

/** Narrows a screens query by the list filter (the same conditions on the page and on "more after it"). */
function narrowed<Q extends SelectQueryBuilder<DB, 'screens', object>>(q: Q, filter: ScreenListFilter): Q {
  let n = q as SelectQueryBuilder<DB, 'screens', object>
  if (filter.drift !== undefined) n = n.where('drift_state', '=', filter.drift)
  if (filter.status !== undefined) n = n.where('status', '=', filter.status)
  if (filter.search !== undefined) n = n.where(sql<boolean>`lower(name) LIKE ${filter.search} ESCAPE '\\'`)
  if (filter.where !== undefined) n = n.where(filter.where)
  return n as Q
}

/** The list statement as built by Kysely (see listStatement for the cached form). */
function buildListStatement(k: Executor, dialect: Dialect, workspaceId: string, scopeIds: string[] | null, page: PageRequest, filter: ScreenListFilter = {}) {
  // On PostgreSQL the page's columns carry the item's field names and each row becomes its
  // JSON object as it is (json_agg of the row): less work for the server than a
  // json_build_object per row.
  // (Typed as the plain columns: the aliases and the drift object differ only in names the raw aggregate reads.)
  const columns = (dialect === 'postgres' ? LIST_FIELDS : LIST_COLUMNS) as typeof LIST_COLUMNS
  let items = narrowed(withinNodes(k.selectFrom('screens').select(columns).where('workspace_id', '=', workspaceId), 'node_id', scopeIds), filter)
  if (page.after) items = items.where('id', '>', page.after)
  items = items.orderBy('id')
  if (page.limit !== null) items = items.limit(page.limit)
  // Same filter, after the page's last id: does another page follow?
  const after = narrowed(
    withinNodes(k.selectFrom('screens').select(sql<number>`1`.as('one')).where('workspace_id', '=', workspaceId), 'node_id', scopeIds).where(
      sql<boolean>`id > pg.last_id`,
    ),
    filter,
  )
  const fields = sql`'id', p.id, 'name', p.name, 'status', p.status, 'contentKind', p.content_kind, 'contentId', p.content_id, 'lastSeenAt', p.last_seen_at, 'nodeId', p.node_id, 'agentVersion', p.agent_version, 'drift', json_object('state', p.drift_state, 'since', p.drift_since, 'items', json(COALESCE(p.drift_items, '[]'))), 'playing', json(json_extract(p.reported, '$.playing')), 'lastScreenshot', json(p.last_shot), 'tags', json(p.tag_list), 'contentName', p.content_name, 'playingName', p.playing_name, 'playingThumbnailUrl', p.playing_thumbnail_url`
  // The aggregate's own ORDER BY: neither engine promises that an aggregate reads the
  // ordered subquery's rows in its order.
  const array =
    dialect === 'postgres' ? sql`CAST(COALESCE(json_agg(p ORDER BY p.id), '[]') AS TEXT)` : sql`json_group_array(json_object(${fields}) ORDER BY p.id)`
  const ids = dialect === 'postgres' ? sql`string_agg(p.id, ',')` : sql`group_concat(p.id, ',')`
  return sql<ListRow>`SELECT pg.data, pg.ids, pg.n, pg.last_id, EXISTS ${after} AS more
FROM (SELECT ${array} AS data, ${ids} AS ids, COUNT(*) AS n, MAX(p.id) AS last_id FROM ${items} p) pg`
}

/** Where each parameter of a cached list statement comes from. */
type ListSlot = { ws: true } | { scope: number } | { after: true } | { limit: true } | { filter: FilterName } | { constant: unknown }
const LIST_CACHE_MAX = 64
const LIST_CACHE_MAX_SCOPE = 32
const listStatements = new Map<string, { sql: string; slots: ListSlot[] }>()
const SENTINEL = '\u0002svc-list:'
const LIMIT_SENTINEL = -987_654_321

/**
 * The list's statement: built by Kysely once per shape (engine, scope size, cursor or not,
 * limit or not) and kept as text with where each parameter comes from, so a request only
 * fills in its values (building and compiling it was about 7 % of the list's CPU).
 */
function listStatement(
  dialect: Dialect,
  workspaceId: string,
  scopeIds: string[] | null,
  page: PageRequest,
  filter: ScreenListFilter,
  k: Executor,
): CompiledQuery<ListRow> {
  // A condition brings parameters of its own: built for the request (not kept as a shape).
  if ((scopeIds !== null && scopeIds.length > LIST_CACHE_MAX_SCOPE) || filter.where !== undefined)
    return buildListStatement(k, dialect, workspaceId, scopeIds, page, filter).compile(k)
  const key = `${dialect}|${scopeIds === null ? '-' : scopeIds.length}|${page.after ? 1 : 0}|${page.limit === null ? '-' : 1}|${FILTERS.map((f) => (filter[f] === undefined ? '-' : 1)).join('')}`
  let hit = listStatements.get(key)
  if (!hit) {
    const scope = scopeIds === null ? null : scopeIds.map((_, i) => `${SENTINEL}s${i}`)
    const probe = { ...page, after: page.after ? `${SENTINEL}after` : page.after, limit: page.limit === null ? null : LIMIT_SENTINEL }
    const probeFilter: ScreenListFilter = {}
    for (const f of FILTERS) if (filter[f] !== undefined) probeFilter[f] = `${SENTINEL}f:${f}`
    const compiled = buildListStatement(k, dialect, `${SENTINEL}ws`, scope, probe, probeFilter).compile(k)
    const slots = compiled.parameters.map((p): ListSlot => {
      if (p === `${SENTINEL}ws`) return { ws: true }
      if (typeof p === 'string' && p.startsWith(`${SENTINEL}f:`)) return { filter: p.slice(SENTINEL.length + 2) as FilterName }
      if (p === `${SENTINEL}after`) return { after: true }
      if (p === LIMIT_SENTINEL) return { limit: true }
      if (typeof p === 'string' && p.startsWith(`${SENTINEL}s`)) return { scope: Number(p.slice(SENTINEL.length + 1)) }
      return { constant: p }
    })
    hit = { sql: compiled.sql, slots }
    if (listStatements.size < LIST_CACHE_MAX) listStatements.set(key, hit)
  }
  const parameters = hit.slots.map((s) =>
    'ws' in s
      ? workspaceId
      : 'after' in s
        ? page.after
        : 'limit' in s
          ? page.limit
          : 'filter' in s
            ? filter[s.filter]
            : 'scope' in s
              ? scopeIds![s.scope]
              : s.constant,
  )
  return CompiledQuery.raw(hit.sql, parameters) as CompiledQuery<ListRow>
}

export class ScreenRepository {
  constructor(private readonly k: Executor) {}

  /** The names beside a screen's ids (its assigned content, what it plays) and the thumbnail of what it plays. */
  async names(dialect: Dialect, workspaceId: string, id: string): Promise<ScreenNames> {
    const r = await this.k.selectFrom('screens').select(nameColumns(dialect)).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst()
    return { contentName: r?.content_name ?? null, playingName: r?.playing_name ?? null, playingThumbnailUrl: r?.playing_thumbnail_url ?? null }
  }

  /** Screens of the workspace matching the filter, in id order, with their home node. */
  targets(workspaceId: string, f: TargetFilter): Promise<{ id: string; node_id: string | null }[]> {
    if (f.ids?.length === 0 || f.nodeIds?.length === 0) return Promise.resolve([])
    return this.matching(this.k, workspaceId, f).select(['id', 'node_id']).orderBy('id', 'asc').execute()
  }

  /** The agent side of the workspace's screens `ids`: presence, version and the last report (its architecture). */
  async agentsOf(
    workspaceId: string,
    ids: readonly string[],
  ): Promise<{ id: string; status: string; agent_version: string | null; reported: string | null }[]> {
    const out: { id: string; status: string; agent_version: string | null; reported: string | null }[] = []
    for (let i = 0; i < ids.length; i += 500) {
      out.push(
        ...(await this.k
          .selectFrom('screens')
          .select(['id', 'status', 'agent_version', 'reported'])
          .where('workspace_id', '=', workspaceId)
          .where('id', 'in', ids.slice(i, i + 500))
          .execute()),
      )
    }
    return out
  }

  /** The workspace's screens matching the filter (an empty `ids` or `nodeIds` matches none), on `k`. */
  private matching(k: Executor, workspaceId: string, f: TargetFilter) {
    let q = withinNodes(k.selectFrom('screens').where('workspace_id', '=', workspaceId), 'node_id', f.scopeIds)
    if (f.ids?.length === 0 || f.nodeIds?.length === 0) q = q.where((eb) => eb.val(1), '=', 0)
    if (f.ids?.length) q = q.where('id', 'in', f.ids)
    if (f.nodeIds?.length) q = q.where('node_id', 'in', f.nodeIds)
    if (f.where) q = q.where(f.where)
    return q
  }

  /**
   * The ids of the workspace's screens matching the filter, as a subquery (set-based
   * writers: `INSERT … SELECT`, `WHERE screen_id IN (…)`), on `k`.
   */
  targetIds(workspaceId: string, f: TargetFilter, k: Executor = this.k): SelectQueryBuilder<DB, 'screens', { id: string }> {
    return this.matching(k, workspaceId, f).select('id')
  }

  /** How many screens match the filter, per home node (without reading the screens). */
  async targetCounts(workspaceId: string, f: TargetFilter): Promise<{ nodeId: string | null; n: number }[]> {
    if (f.ids?.length === 0 || f.nodeIds?.length === 0) return []
    const rows = await this.matching(this.k, workspaceId, f)
      .select((eb) => ['node_id', eb.fn.countAll<number>().as('n')])
      .groupBy('node_id')
      .execute()
    return rows.map((r) => ({ nodeId: r.node_id, n: Number(r.n) }))
  }

  /** What drift is judged from, for these screens of the workspace. */
  driftInputs(workspaceId: string, ids: readonly string[]): Promise<DriftInputRow[]> {
    if (!ids.length) return Promise.resolve([])
    return this.k.selectFrom('screens').select(DRIFT_INPUT_COLUMNS).where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute()
  }

  /** Stores a screen's drift (the list's kept pages are dropped: views change). */
  async setDrift(workspaceId: string, id: string, set: Pick<ScreenRecord, 'drift_state' | 'drift_since' | 'drift_items'>, k: Executor = this.k): Promise<void> {
    await k.updateTable('screens').set(set).where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
    announce(k, { kind: 'workspaceScreens', workspaceId })
  }

  /** How many screens each status has, every workspace (the metrics). */
  async countByStatus(): Promise<[string, number][]> {
    const rows = await this.k
      .selectFrom('screens')
      .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy('status')
      .execute()
    return rows.map((r) => [r.status, Number(r.n)])
  }

  /**
   * Online screens told a new desired state at or before `cutoff` that have not reported
   * since: their applied version may lag (the drift sweep judges them).
   */
  unansweredSince(cutoff: string, limit: number): Promise<{ id: string; workspace_id: string }[]> {
    return this.k
      .selectFrom('screens')
      .select(['id', 'workspace_id'])
      .where('status', '=', 'online')
      .where('desired_published_at', '<=', cutoff)
      .where((eb) => eb.or([eb('reported_at', 'is', null), eb('reported_at', '<=', eb.ref('desired_published_at'))]))
      .orderBy('id')
      .limit(limit)
      .execute()
  }

  /** Drifting screens (of one workspace, or all), with when they began to drift. */
  drifting(workspaceId?: string): Promise<Pick<ScreenRecord, 'id' | 'workspace_id' | 'name' | 'node_id' | 'drift_since' | 'drift_items'>[]> {
    let q = this.k.selectFrom('screens').select(['id', 'workspace_id', 'name', 'node_id', 'drift_since', 'drift_items']).where('drift_state', '=', 'drifting')
    if (workspaceId !== undefined) q = q.where('workspace_id', '=', workspaceId)
    return q.orderBy('id').execute()
  }

  /** Screens with a desired state last published before `cutoff` (or never), oldest first: their signed media URLs need renewing. */
  publishedBefore(cutoff: string, limit: number): Promise<{ id: string; workspace_id: string }[]> {
    return (
      this.k
        .selectFrom('screens')
        .select(['id', 'workspace_id'])
        .where('desired_version', '>', 0)
        .where((eb) => eb.or([eb('desired_published_at', 'is', null), eb('desired_published_at', '<', cutoff)]))
        // Never published first, on both engines (PostgreSQL would put NULLs last).
        .orderBy('desired_published_at', (ob) => ob.asc().nullsFirst())
        .orderBy('id')
        .limit(limit)
        .execute()
    )
  }

  // ---- desired state (the builder and the publisher) ----

  /** The columns a desired state is built from, for a batch of the workspace's screens (any order). */
  forDesiredState(workspaceId: string, ids: readonly string[]): Promise<DesiredScreenRow[]> {
    if (!ids.length) return Promise.resolve([])
    return this.k
      .selectFrom('screens')
      .select(['id', 'node_id', 'content_kind', 'content_id', 'timezone', 'desired_version', 'panel_protocol', 'panel_set_id', 'panel_poll_seconds'])
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', ids)
      .execute()
  }

  /**
   * Takes the next desired version of each screen (one UPDATE … RETURNING); with
   * `publishedAt`, also records it as `desired_published_at`. Answers [screenId, version].
   */
  async bumpDesiredVersions(workspaceId: string, ids: readonly string[], publishedAt: string | null, k: Executor = this.k): Promise<[string, number][]> {
    if (!ids.length) return []
    const rows = await k
      .updateTable('screens')
      .set((eb) => ({ desired_version: eb('desired_version', '+', 1), ...(publishedAt ? { desired_published_at: publishedAt } : {}) }))
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', ids)
      .returning(['id', 'desired_version'])
      .execute()
    return rows.map((r) => [r.id, Number(r.desired_version)])
  }

  byId(workspaceId: string, id: string): Promise<ScreenRecord | undefined> {
    return this.k.selectFrom('screens').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
  }

  /**
   * A page of list items by id ascending, within the node ids the credential reaches (null =
   * all), with its items already as JSON text, built by the database: one
   * string crosses to JavaScript instead of one object per row (building row objects was
   * most of the list's cost per item). `data` is the items' JSON array (keys as the API
   * names them), `ids` the page's screen ids, `more` whether rows follow the page's last id.
   */
  async listJson(
    dialect: Dialect,
    workspaceId: string,
    scopeIds: string[] | null,
    page: PageRequest,
    filter: ScreenListFilter = {},
  ): Promise<{ data: string; ids: string[]; count: number; lastId: string | null; more: boolean }> {
    const r = await this.k.executeQuery<ListRow>(listStatement(dialect, workspaceId, scopeIds, page, filter, this.k))
    const row = r.rows[0]!
    return {
      data: row.data,
      ids: row.ids ? row.ids.split(',') : [],
      count: Number(row.n),
      lastId: row.last_id,
      more: row.more === true || Number(row.more) === 1,
    }
  }

  async count(workspaceId: string, scopeIds: string[] | null, filter: ScreenListFilter = {}): Promise<number> {
    const q = narrowed(withinNodes(this.k.selectFrom('screens').where('workspace_id', '=', workspaceId), 'node_id', scopeIds), filter)
    const r = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    return Number(r.n)
  }

  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    const r = await this.k
      .selectFrom('screens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('node_id', '=', nodeId)
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** A screen's workspace, name and location, whatever its workspace (the audit log's device actor). */
  async origin(screenId: string): Promise<{ workspace_id: string; name: string; node_id: string | null } | undefined> {
    return this.k.selectFrom('screens').select(['workspace_id', 'name', 'node_id']).where('id', '=', screenId).executeTakeFirst()
  }

  /** The hash of the screen's device secret (any workspace: the broker knows only the id). */
  async credentialHash(screenId: string): Promise<string | null> {
    const r = await this.k.selectFrom('screens').select('device_secret_hash').where('id', '=', screenId).executeTakeFirst()
    return r?.device_secret_hash ?? null
  }

  /** The hashes of several screens' device secrets (screens unknown are absent), 500 ids per query. */
  async credentialHashes(screenIds: readonly string[]): Promise<Map<string, string | null>> {
    const out = new Map<string, string | null>()
    for (let i = 0; i < screenIds.length; i += 500) {
      const rows = await this.k
        .selectFrom('screens')
        .select(['id', 'device_secret_hash'])
        .where('id', 'in', screenIds.slice(i, i + 500))
        .execute()
      for (const r of rows) out.set(r.id, r.device_secret_hash ?? null)
    }
    return out
  }

  async insert(
    row: Pick<ScreenRecord, 'id' | 'workspace_id' | 'node_id' | 'name' | 'model' | 'serial_number' | 'created_at' | 'updated_at'>,
    k: Executor = this.k,
  ): Promise<void> {
    await k.insertInto('screens').values(row).execute()
    announce(k, { kind: 'workspaceScreens', workspaceId: row.workspace_id })
  }

  async rename(workspaceId: string, id: string, set: { name: string; node_id: string | null; timezone?: string; updated_at: string }): Promise<void> {
    await this.k.updateTable('screens').set(set).where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
    announce(this.k, { kind: 'workspaceScreens', workspaceId })
  }

  async delete(workspaceId: string, id: string, k: Executor = this.k): Promise<void> {
    await k.deleteFrom('screens').where('id', '=', id).where('workspace_id', '=', workspaceId).execute()
    announce(k, { kind: 'workspaceScreens', workspaceId })
  }

  async setDeviceSecretHash(id: string, hash: string, at: string, k: Executor = this.k): Promise<void> {
    await k.updateTable('screens').set({ device_secret_hash: hash, updated_at: at }).where('id', '=', id).execute()
  }

  panel(workspaceId: string, id: string): Promise<ScreenPanelRecord | undefined> {
    return this.k
      .selectFrom('screens')
      .select(['panel_protocol', 'panel_set_id', 'panel_poll_seconds', 'panel_port_hint'])
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst()
  }

  /** Sets the panel profile (all null clears it). */
  async setPanel(workspaceId: string, id: string, panel: ScreenPanelRecord, at: string): Promise<void> {
    await this.k
      .updateTable('screens')
      .set({ ...panel, updated_at: at })
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .execute()
  }

  assignmentOf(workspaceId: string, id: string): Promise<ScreenAssignmentRecord | undefined> {
    return this.k
      .selectFrom('screens')
      .select(['id', 'node_id', 'content_kind', 'content_id'])
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst()
  }

  /** Assigns (or, with nulls, clears) content on these screens, in chunks; run it in a transaction for all-or-nothing. */
  async setAssignment(
    workspaceId: string,
    ids: string[],
    content: { kind: string | null; id: string | null },
    at: string,
    k: Executor = this.k,
  ): Promise<void> {
    for (let i = 0; i < ids.length; i += CHUNK) {
      await k
        .updateTable('screens')
        .set({ content_kind: content.kind, content_id: content.id, updated_at: at })
        .where('workspace_id', '=', workspaceId)
        .where('id', 'in', ids.slice(i, i + CHUNK))
        .execute()
    }
    announce(k, { kind: 'workspaceScreens', workspaceId })
  }

  async desiredVersion(workspaceId: string, id: string): Promise<number> {
    const r = await this.k.selectFrom('screens').select('desired_version').where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
    return Number(r?.desired_version ?? 0)
  }

  /** Screens assigned this content (they block deleting it). */
  async countAssigned(workspaceId: string, kind: string, contentId: string): Promise<number> {
    const r = await this.k
      .selectFrom('screens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('content_kind', '=', kind)
      .where('content_id', '=', contentId)
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** Screens assigned any of `contentIds`. */
  async assignedAny(workspaceId: string, contentIds: string[]): Promise<string[]> {
    const out = new Set<string>()
    for (let i = 0; i < contentIds.length; i += CHUNK) {
      const rows = await this.k
        .selectFrom('screens')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('content_id', 'in', contentIds.slice(i, i + CHUNK))
        .execute()
      for (const r of rows) out.add(r.id)
    }
    return [...out].sort()
  }
}
