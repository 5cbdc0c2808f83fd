// The only code that reads or writes `alert_rules`, `alert_events` and `alert_screen_state`.
// A rule's `config` is JSON read and written whole; its scope (`config.scopeId`) is also
// kept in the `scope_id` column, so the rules watching a node are found by an indexed
// equality on both engines. One open event per rule and screen is enforced by a partial
// unique index: inserting a second one fails with a unique violation the caller expects.
import type { Executor } from '../../platform/db/Database.js'
import type { AlertEventRow, AlertRuleRow, AlertScreenStateRow } from './tables.js'
import type { PageRequest } from '../../platform/paging.js'
import { paged, withinNodes } from '../../platform/db/keyset.js'

export interface AlertEventFilter {
  state?: string | undefined
  screenId?: string | undefined
  code?: string | undefined
  ruleId?: string | undefined
}

/** Screens per statement in IN lists and multi-row writes (7 parameters a row: well under either engine's limit). */
const CHUNK = 400

export class AlertRepository {
  constructor(private readonly k: Executor) {}

  // ---- rules ----

  /** A live (not deleted) rule of the workspace whose home the credential reaches (`scopeIds` null = any). */
  rule(workspaceId: string, id: string, scopeIds: string[] | null): Promise<AlertRuleRow | undefined> {
    return withinNodes(
      this.k.selectFrom('alert_rules').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null),
      'node_id',
      scopeIds,
    ).executeTakeFirst()
  }

  /** By id alone, deleted or not (an event closing after its rule went). */
  ruleById(id: string): Promise<AlertRuleRow | undefined> {
    return this.k.selectFrom('alert_rules').selectAll().where('id', '=', id).executeTakeFirst()
  }

  private rulesQuery(workspaceId: string, scopeIds: string[] | null, search?: string) {
    let q = withinNodes(this.k.selectFrom('alert_rules').where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null), 'node_id', scopeIds)
    if (search) q = q.where((eb) => eb(eb.fn('lower', ['name']), 'like', `%${search.toLowerCase()}%`))
    return q
  }

  rules(workspaceId: string, scopeIds: string[] | null, search: string | undefined, page: PageRequest): Promise<AlertRuleRow[]> {
    return paged(this.rulesQuery(workspaceId, scopeIds, search).selectAll(), page, 'desc').execute()
  }

  async countRules(workspaceId: string, scopeIds: string[] | null, search?: string): Promise<number> {
    const r = await this.rulesQuery(workspaceId, scopeIds, search)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  /** Enabled, live rules of a workspace in id order. */
  activeRules(workspaceId: string): Promise<AlertRuleRow[]> {
    return this.k
      .selectFrom('alert_rules')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('enabled', '=', 1)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .execute()
  }

  /** Live rules homed at `nodeId` or scoped to it (what keeps the node from being deleted). */
  async countAtNode(workspaceId: string, nodeId: string): Promise<number> {
    const r = await this.k
      .selectFrom('alert_rules')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('deleted_at', 'is', null)
      .where((eb) => eb.or([eb('node_id', '=', nodeId), eb('scope_id', '=', nodeId)]))
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  async insertRule(row: AlertRuleRow): Promise<void> {
    await this.k.insertInto('alert_rules').values(row).execute()
  }

  async updateRule(id: string, set: Pick<AlertRuleRow, 'name' | 'trigger_code' | 'config' | 'scope_id' | 'enabled' | 'node_id' | 'updated_at'>): Promise<void> {
    await this.k.updateTable('alert_rules').set(set).where('id', '=', id).execute()
  }

  async deleteRule(id: string, at: string): Promise<void> {
    await this.k.updateTable('alert_rules').set({ deleted_at: at, updated_at: at }).where('id', '=', id).execute()
  }

  // ---- events ----

  /** Inserts an open event; throws a unique violation when the rule already has one open for the screen. */
  async insertEvent(row: AlertEventRow): Promise<void> {
    await this.k.insertInto('alert_events').values(row).execute()
  }

  event(id: string): Promise<AlertEventRow | undefined> {
    return this.k.selectFrom('alert_events').selectAll().where('id', '=', id).executeTakeFirst()
  }

  eventIn(workspaceId: string, id: string, scopeIds: string[] | null): Promise<AlertEventRow | undefined> {
    return withinNodes(
      this.k.selectFrom('alert_events').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId),
      'node_id',
      scopeIds,
    ).executeTakeFirst()
  }

  /** Open events of a screen for a code (and one rule, when given). */
  openEvents(workspaceId: string, screenId: string, code: string, ruleId?: string): Promise<AlertEventRow[]> {
    let q = this.k
      .selectFrom('alert_events')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('screen_id', '=', screenId)
      .where('code', '=', code)
      .where('closed_at', 'is', null)
    if (ruleId) q = q.where('rule_id', '=', ruleId)
    return q.orderBy('id').execute()
  }

  /** Open events of several screens of the workspace for a code, by id. */
  async openEventsOf(workspaceId: string, screenIds: readonly string[], code: string): Promise<AlertEventRow[]> {
    const out: AlertEventRow[] = []
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      out.push(
        ...(await this.k
          .selectFrom('alert_events')
          .selectAll()
          .where('workspace_id', '=', workspaceId)
          .where('screen_id', 'in', screenIds.slice(i, i + CHUNK))
          .where('code', '=', code)
          .where('closed_at', 'is', null)
          .orderBy('id')
          .execute()),
      )
    }
    return out
  }

  /** Closes one open event; false when it was already closed (by another call meanwhile). */
  async closeEvent(id: string, at: string, detail: string): Promise<boolean> {
    const r = await this.k.updateTable('alert_events').set({ closed_at: at, detail }).where('id', '=', id).where('closed_at', 'is', null).executeTakeFirst()
    return Number(r.numUpdatedRows) === 1
  }

  /** Closes every open event of a rule. */
  async closeRuleEvents(ruleId: string, at: string, detail: string): Promise<number> {
    const r = await this.k
      .updateTable('alert_events')
      .set({ closed_at: at, detail })
      .where('rule_id', '=', ruleId)
      .where('closed_at', 'is', null)
      .executeTakeFirst()
    return Number(r.numUpdatedRows)
  }

  private eventsQuery(workspaceId: string, scopeIds: string[] | null, f: AlertEventFilter) {
    let q = withinNodes(this.k.selectFrom('alert_events').where('workspace_id', '=', workspaceId), 'node_id', scopeIds)
    if (f.state === 'open') q = q.where('closed_at', 'is', null)
    if (f.state === 'closed') q = q.where('closed_at', 'is not', null)
    if (f.screenId) q = q.where('screen_id', '=', f.screenId)
    if (f.code) q = q.where('code', '=', f.code)
    if (f.ruleId) q = q.where('rule_id', '=', f.ruleId)
    return q
  }

  events(workspaceId: string, scopeIds: string[] | null, f: AlertEventFilter, page: PageRequest): Promise<AlertEventRow[]> {
    return paged(this.eventsQuery(workspaceId, scopeIds, f).selectAll(), page, 'desc').execute()
  }

  async countEvents(workspaceId: string, scopeIds: string[] | null, f: AlertEventFilter): Promise<number> {
    const r = await this.eventsQuery(workspaceId, scopeIds, f)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(r.n)
  }

  // ---- per-screen state ----

  screenState(workspaceId: string, screenId: string): Promise<AlertScreenStateRow | undefined> {
    return this.k.selectFrom('alert_screen_state').selectAll().where('workspace_id', '=', workspaceId).where('screen_id', '=', screenId).executeTakeFirst()
  }

  /** The states of several screens of the workspace (screens without one are absent). */
  async screenStates(workspaceId: string, screenIds: readonly string[]): Promise<Map<string, AlertScreenStateRow>> {
    const out = new Map<string, AlertScreenStateRow>()
    for (let i = 0; i < screenIds.length; i += CHUNK) {
      const rows = await this.k
        .selectFrom('alert_screen_state')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('screen_id', 'in', screenIds.slice(i, i + CHUNK))
        .execute()
      for (const r of rows) out.set(r.screen_id, r)
    }
    return out
  }

  /** Inserts or replaces the states of distinct screens, a chunk per statement. */
  async putScreenStates(rows: readonly AlertScreenStateRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK) await this.putChunk(rows.slice(i, i + CHUNK))
  }

  private async putChunk(rows: AlertScreenStateRow[]): Promise<void> {
    await this.k
      .insertInto('alert_screen_state')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'screen_id']).doUpdateSet((eb) => ({
          screen_name: eb.ref('excluded.screen_name'),
          node_id: eb.ref('excluded.node_id'),
          status: eb.ref('excluded.status'),
          since: eb.ref('excluded.since'),
          flaps: eb.ref('excluded.flaps'),
        })),
      )
      .execute()
  }

  async deleteScreenState(workspaceId: string, screenId: string): Promise<void> {
    await this.k.deleteFrom('alert_screen_state').where('workspace_id', '=', workspaceId).where('screen_id', '=', screenId).execute()
  }

  /** Screens last seen offline (of one workspace, or all), by workspace and screen. */
  offlineScreens(workspaceId?: string): Promise<AlertScreenStateRow[]> {
    let q = this.k.selectFrom('alert_screen_state').selectAll().where('status', '=', 'offline')
    if (workspaceId) q = q.where('workspace_id', '=', workspaceId)
    return q.orderBy('workspace_id').orderBy('screen_id').execute()
  }
}
