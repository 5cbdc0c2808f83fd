// Opens and closes alert events from what devices report. The device link calls
// screenStatusChanged / panelPowerReported / storageReported with the screen's identity
// as plain arguments (this module keeps its own per-screen state, no screens table);
// AlertWorker calls checkConnectionLost() periodically for the time-based trigger.
// One open event per rule and screen (a partial unique index enforces it); closing sets
// `detail.kind`: `recovery`, `network-unstable` (it flapped), `display-off`, or
// `outage-history` (closed because the rule stopped watching or the screen went away).
import type { Clock, IdGenerator } from '../clock.js'
import type { Database } from '../db/Database.js'
import { isUniqueViolation } from '../db/Database.js'
import { notFound } from '../errors.js'
import type { Principal } from '../auth/Principal.js'
import { descPageSql, pageOf, type Page, type PageRequest } from '../http/pagination.js'
import type { NodeService } from '../services/NodeService.js'
import { parseConfig, type AlertCode, type AlertRuleRow, type AlertRuleService } from './AlertRuleService.js'
import type { AlertNotifier } from './AlertNotifier.js'

export interface ScreenRef {
  id: string
  /** Omitted: the name last seen for this screen, else `(unknown screen)`. */
  name?: string
  nodeId: string | null
}

export interface AlertEventView {
  id: string
  ruleId: string
  code: string
  severity: string
  screenId: string
  screenName: string
  message: string
  nextAction: string
  openedAt: string
  closedAt: string | null
  detail: Record<string, unknown> | null
}

interface EventRow {
  id: string
  workspace_id: string
  rule_id: string
  code: string
  severity: string
  screen_id: string
  screen_name: string
  node_id: string | null
  message: string
  next_action: string
  opened_at: string
  closed_at: string | null
  detail: string | null
}

interface StateRow {
  workspace_id: string
  screen_id: string
  screen_name: string
  node_id: string | null
  status: string
  since: string
  flaps: string
}

/** Offline transitions within this window that make a recovery `network-unstable`. */
export const FLAP_WINDOW_MS = 60 * 60_000
export const FLAP_COUNT = 3
export const DEFAULT_OFFLINE_MINUTES = 5
export const DEFAULT_STORAGE_PERCENT = 90
export const UNKNOWN_SCREEN = '(unknown screen)'

const NEXT_ACTION: Record<AlertCode, string> = {
  'connection-lost': 'Check power and network at the screen; the player reconnects by itself once it is back online.',
  'display-off': 'Switch the panel on, or check its RS232 link and input source.',
  'storage-critical': 'Remove unused media from what is assigned to this screen, or free space on the player.',
}

function eventView(r: EventRow): AlertEventView {
  let detail: Record<string, unknown> | null = null
  try {
    detail = r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : null
  } catch {
    detail = null
  }
  return {
    id: r.id,
    ruleId: r.rule_id,
    code: r.code,
    severity: r.severity,
    screenId: r.screen_id,
    screenName: r.screen_name || '(unknown screen)',
    message: r.message,
    nextAction: r.next_action,
    openedAt: r.opened_at,
    closedAt: r.closed_at,
    detail,
  }
}

const iso = (at: Date | string | undefined, clock: Clock): string => (at === undefined ? clock.now().toISOString() : new Date(at).toISOString())

export class AlertEvaluator {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly rules: AlertRuleService,
    readonly notifier: AlertNotifier,
  ) {}

  // ---- inputs from the device link ----

  /** A screen went online or offline (the agent's status topic, including its Last Will). */
  async screenStatusChanged(workspaceId: string, screen: ScreenRef, status: 'online' | 'offline', at?: Date | string): Promise<void> {
    const when = iso(at, this.clock)
    const prev = await this.db.get<StateRow>('SELECT * FROM alert_screen_state WHERE workspace_id = ? AND screen_id = ?', [workspaceId, screen.id])
    const name = screen.name ?? prev?.screen_name ?? UNKNOWN_SCREEN
    const cutoff = new Date(Date.parse(when) - FLAP_WINDOW_MS).toISOString()
    let flaps = (prev ? (JSON.parse(prev.flaps) as string[]) : []).filter((f) => f >= cutoff)
    if (prev && prev.status === status) {
      // A repeated report changes nothing but the name and place.
      await this.db.run('UPDATE alert_screen_state SET screen_name = ?, node_id = ? WHERE workspace_id = ? AND screen_id = ?', [
        name,
        screen.nodeId,
        workspaceId,
        screen.id,
      ])
    } else {
      if (status === 'offline') flaps = [...flaps, when]
      await this.db.run(
        `INSERT INTO alert_screen_state (workspace_id, screen_id, screen_name, node_id, status, since, flaps) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (workspace_id, screen_id) DO UPDATE SET screen_name = excluded.screen_name, node_id = excluded.node_id, status = excluded.status, since = excluded.since, flaps = excluded.flaps`,
        [workspaceId, screen.id, name, screen.nodeId, status, when, JSON.stringify(flaps)],
      )
    }
    if (status === 'offline') {
      await this.checkConnectionLost(workspaceId)
      return
    }
    const offlineSince = prev && prev.status === 'offline' ? prev.since : null
    const offlineMinutes = offlineSince ? Math.round((Date.parse(when) - Date.parse(offlineSince)) / 60_000) : null
    const detail =
      flaps.length >= FLAP_COUNT
        ? { kind: 'network-unstable', offlineTimesLastHour: flaps.length, offlineSince, offlineMinutes }
        : { kind: 'recovery', offlineSince, offlineMinutes }
    await this.closeOpen(workspaceId, screen.id, 'connection-lost', detail, when)
  }

  /** The panel's power as the agent reports it, and whether content should be playing now. */
  async panelPowerReported(workspaceId: string, screen: ScreenRef, power: string, contentShouldPlay: boolean, at?: Date | string): Promise<void> {
    const when = iso(at, this.clock)
    // A panel that could not be read (`unknown`) neither opens nor closes anything.
    if (power === 'unknown') return
    if (power !== 'on' && contentShouldPlay) {
      const named = await this.named(workspaceId, screen)
      for (const rule of await this.matching(workspaceId, 'display-off', screen)) {
        await this.open(
          rule,
          named,
          'display-off',
          `${named.name}: the display is ${power} while content should be playing.`,
          { kind: 'display-off', power, reportedAt: when },
          when,
        )
      }
    } else {
      await this.closeOpen(
        workspaceId,
        screen.id,
        'display-off',
        { kind: 'display-off', power, resolvedBy: power === 'on' ? 'power-on' : 'content-stopped', resolvedAt: when },
        when,
      )
    }
  }

  /** The player's storage use. */
  async storageReported(workspaceId: string, screen: ScreenRef, usedBytes: number, totalBytes: number, at?: Date | string): Promise<void> {
    const when = iso(at, this.clock)
    if (!(totalBytes > 0)) return
    const percent = Math.round((usedBytes / totalBytes) * 1000) / 10
    const named = await this.named(workspaceId, screen)
    for (const rule of await this.matching(workspaceId, 'storage-critical', screen)) {
      const limit = numberOr(parseConfig(rule).thresholds.percent, DEFAULT_STORAGE_PERCENT)
      if (percent >= limit) {
        await this.open(rule, named, 'storage-critical', `${named.name}: storage is ${percent}% full (alert at ${limit}%).`, null, when)
      } else {
        await this.closeOpen(workspaceId, screen.id, 'storage-critical', { kind: 'recovery', usedPercent: percent }, when, rule.id)
      }
    }
  }

  /** The screen was removed: its open events close as history, its state is forgotten. */
  async screenRemoved(workspaceId: string, screenId: string): Promise<void> {
    const when = this.clock.now().toISOString()
    for (const code of ['connection-lost', 'display-off', 'storage-critical'] as const)
      await this.closeOpen(workspaceId, screenId, code, { kind: 'outage-history', reason: 'screen removed' }, when)
    await this.db.run('DELETE FROM alert_screen_state WHERE workspace_id = ? AND screen_id = ?', [workspaceId, screenId])
  }

  /** connection-lost: opens for screens offline longer than the rule's `thresholds.minutes`. */
  async checkConnectionLost(workspaceId?: string): Promise<number> {
    const now = this.clock.now().getTime()
    const offline = await this.db.all<StateRow>(
      `SELECT * FROM alert_screen_state WHERE status = 'offline'${workspaceId ? ' AND workspace_id = ?' : ''} ORDER BY workspace_id, screen_id`,
      workspaceId ? [workspaceId] : [],
    )
    let opened = 0
    // Rules are read once per workspace per check, not once per offline screen.
    const cache = new Map<string, AlertRuleRow[]>()
    for (const s of offline) {
      const screen = { id: s.screen_id, name: s.screen_name, nodeId: s.node_id }
      for (const rule of await this.matching(s.workspace_id, 'connection-lost', screen, cache)) {
        const minutes = numberOr(parseConfig(rule).thresholds.minutes, DEFAULT_OFFLINE_MINUTES)
        const offlineMs = now - Date.parse(s.since)
        if (offlineMs < minutes * 60_000) continue
        const msg = `${screen.name} has been offline for ${Math.max(1, Math.round(offlineMs / 60_000))} minute(s) (since ${s.since}).`
        if (await this.open(rule, screen, 'connection-lost', msg, null, new Date(now).toISOString())) opened++
      }
    }
    return opened
  }

  // ---- rule matching and event rows ----

  /** The screen with a name: the one given, else the last one seen, else `(unknown screen)`. */
  private async named(workspaceId: string, screen: ScreenRef): Promise<ScreenRef & { name: string }> {
    if (screen.name) return { ...screen, name: screen.name }
    const s = await this.db.get<{ screen_name: string }>('SELECT screen_name FROM alert_screen_state WHERE workspace_id = ? AND screen_id = ?', [
      workspaceId,
      screen.id,
    ])
    return { ...screen, name: s?.screen_name ?? UNKNOWN_SCREEN }
  }

  private async matching(workspaceId: string, code: AlertCode, screen: ScreenRef, cache?: Map<string, AlertRuleRow[]>): Promise<AlertRuleRow[]> {
    const out: AlertRuleRow[] = []
    let rules = cache?.get(workspaceId)
    if (!rules) {
      rules = await this.rules.activeFor(workspaceId, code)
      cache?.set(workspaceId, rules)
    }
    for (const rule of rules) {
      if (rule.node_id && !(await this.nodes.isWithin(workspaceId, screen.nodeId, rule.node_id))) continue
      const c = parseConfig(rule)
      const inScope =
        c.scopeKind === 'workspace'
          ? true
          : c.scopeKind === 'screen'
            ? c.scopeId === screen.id
            : await this.nodes.isWithin(workspaceId, screen.nodeId, c.scopeId)
      if (inScope) out.push(rule)
    }
    return out
  }

  private async open(
    rule: AlertRuleRow,
    screen: ScreenRef & { name: string },
    code: AlertCode,
    message: string,
    detail: Record<string, unknown> | null,
    when: string,
  ): Promise<boolean> {
    const id = this.ids.next('alertEvent')
    const severity = parseConfig(rule).severity
    try {
      await this.db.run(
        `INSERT INTO alert_events (id, workspace_id, rule_id, code, severity, screen_id, screen_name, node_id, message, next_action, opened_at, detail)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          id,
          rule.workspace_id,
          rule.id,
          code,
          severity,
          screen.id,
          screen.name,
          screen.nodeId,
          message,
          NEXT_ACTION[code],
          when,
          detail ? JSON.stringify(detail) : null,
        ],
      )
    } catch (e) {
      if (isUniqueViolation(e)) return false // already open for this rule and screen
      throw e
    }
    const row = (await this.db.get<EventRow>('SELECT * FROM alert_events WHERE id = ?', [id]))!
    this.notifier.notify(rule, eventView(row), 'opened')
    return true
  }

  private async closeOpen(
    workspaceId: string,
    screenId: string,
    code: AlertCode,
    detail: Record<string, unknown>,
    when: string,
    ruleId?: string,
  ): Promise<void> {
    const open = await this.db.all<EventRow>(
      `SELECT * FROM alert_events WHERE workspace_id = ? AND screen_id = ? AND code = ? AND closed_at IS NULL${ruleId ? ' AND rule_id = ?' : ''}`,
      ruleId ? [workspaceId, screenId, code, ruleId] : [workspaceId, screenId, code],
    )
    for (const ev of open) {
      const r = await this.db.run('UPDATE alert_events SET closed_at = ?, detail = ? WHERE id = ? AND closed_at IS NULL', [when, JSON.stringify(detail), ev.id])
      if (r.changes !== 1) continue
      const rule = await this.db.get<AlertRuleRow>('SELECT * FROM alert_rules WHERE id = ?', [ev.rule_id])
      if (rule) this.notifier.notify(rule, eventView({ ...ev, closed_at: when, detail: JSON.stringify(detail) }), 'closed')
    }
  }

  // ---- reads for /v1/alert-events ----

  async list(
    p: Principal,
    page: PageRequest,
    filter: { state?: string | undefined; screenId?: string | undefined; code?: string | undefined; ruleId?: string | undefined },
  ): Promise<Page<AlertEventView>> {
    const scope = await this.nodes.scopeClause(p, 'node_id')
    let where = `workspace_id = ?${scope.sql}`
    const params: (string | number)[] = [p.workspaceId, ...scope.params]
    if (filter.state === 'open') where += ' AND closed_at IS NULL'
    if (filter.state === 'closed') where += ' AND closed_at IS NOT NULL'
    for (const [col, v] of [
      ['screen_id', filter.screenId],
      ['code', filter.code],
      ['rule_id', filter.ruleId],
    ] as const) {
      if (v) {
        where += ` AND ${col} = ?`
        params.push(v)
      }
    }
    const total = page.count ? (await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM alert_events WHERE ${where}`, params))!.n : undefined
    const sql = descPageSql(page)
    const rows = await this.db.all<EventRow>(`SELECT * FROM alert_events WHERE ${where}${sql.where}${sql.tail}`, [...params, ...sql.params, ...sql.limitParams])
    return pageOf(rows, page, eventView, total)
  }

  async get(p: Principal, id: string): Promise<AlertEventView> {
    const scope = await this.nodes.scopeClause(p, 'node_id')
    const r = await this.db.get<EventRow>(`SELECT * FROM alert_events WHERE id = ? AND workspace_id = ?${scope.sql}`, [id, p.workspaceId, ...scope.params])
    if (!r) throw notFound('No such alert event.')
    return eventView(r)
  }
}

function numberOr(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback
}
