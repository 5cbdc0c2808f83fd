// Opens and closes alert events from what devices report. The device link calls
// screenStatusChanged / panelPowerReported / storageReported with the screen's identity
// as plain arguments (this module keeps its own per-screen state, no screens table), and
// the play log calls playLogLimited / playLogRecovered;
// AlertWorker calls checkConnectionLost() periodically for the time-based trigger.
// One open event per rule and screen (a partial unique index enforces it); closing sets
// `detail.kind`: `recovery`, `network-unstable` (it flapped), `display-off`, or
// `outage-history` (closed because the rule stopped watching or the screen went away).
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { isUniqueViolation } from '../../platform/db/Database.js'
import type { AlertEventRow, AlertScreenStateRow } from './tables.js'
import { AlertRepository } from './AlertRepository.js'
import { notFound } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import type { NodeService } from '../nodes/index.js'
import type { GroupService } from '../targeting/index.js'
import { ALERT_CODES, parseConfig, type SEVERITIES, type AlertCode, type AlertRuleRow, type AlertRuleService } from './AlertRuleService.js'
import type { AlertNotifier } from './AlertNotifier.js'
import type { AlertEventView } from './AlertEventView.js'

export interface ScreenRef {
  id: string
  /** Omitted: the name last seen for this screen, else `(unknown screen)`. */
  name?: string
  nodeId: string | null
}

/** One online/offline transition of a screen. */
export interface ScreenStatusInput {
  workspaceId: string
  screen: ScreenRef
  status: 'online' | 'offline'
  /** When it happened (absent: now). */
  at?: Date | string | undefined
}

/** Offline transitions within this window that make a recovery `network-unstable`. */
export const FLAP_WINDOW_MS = 60 * 60_000
export const FLAP_COUNT = 3
export const DEFAULT_OFFLINE_MINUTES = 5
export const DEFAULT_STORAGE_PERCENT = 90
export const DEFAULT_DRIFT_MINUTES = 10
export const UNKNOWN_SCREEN = '(unknown screen)'

const NEXT_ACTION: Record<AlertCode, string> = {
  'connection-lost': 'Check power and network at the screen; the player reconnects by itself once it is back online.',
  'display-off': 'Switch the panel on, or check its RS232 link and input source.',
  'storage-critical': 'Remove unused media from what is assigned to this screen, or free space on the player.',
  'play-log-limited':
    "Check the player's clock (plays in the future or before pairing are refused), a second player page left open, or software on it sending plays it did not show; a player back from a long outage drains its backlog at the screen's rate.",
  'panel-not-obeying':
    "The panel did not follow its operating hours after the player's retries: check its RS232 cable and set id, whether it is set to accept commands in standby, and its own timers or eco settings.",
  drift:
    "Look at the screen's drift items: a panel switched by hand or not obeying its RS232 commands, a player that did not apply its new state (network, storage), or a player clock that is off.",
}

function eventView(r: AlertEventRow): AlertEventView {
  let detail: Record<string, unknown> | null = null
  try {
    detail = r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : null
  } catch {
    detail = null
  }
  return {
    id: r.id,
    ruleId: r.rule_id,
    code: r.code as AlertCode,
    severity: r.severity as (typeof SEVERITIES)[number],
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
  private readonly repo: AlertRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly rules: AlertRuleService,
    readonly notifier: AlertNotifier,
    private readonly groups: Pick<GroupService, 'membersAmong'>,
  ) {
    this.repo = new AlertRepository(db.kysely)
  }

  // ---- inputs from the device link ----

  /** A screen went online or offline (the agent's status topic, including its Last Will). */
  async screenStatusChanged(workspaceId: string, screen: ScreenRef, status: 'online' | 'offline', at?: Date | string): Promise<void> {
    await this.screensStatusChanged([{ workspaceId, screen, status, at }])
  }

  /**
   * Several online/offline transitions, in order, as screenStatusChanged would take them one
   * by one, read and written a batch at a time: one read of the screens' states, one upsert,
   * one read of the open connection-lost events of the screens back online, and one
   * connection-lost check per workspace (a connect storm's thousands of screens are a few
   * statements, not four per screen). A screen that changes twice is split into two runs,
   * so its second change sees its first.
   */
  async screensStatusChanged(changes: readonly ScreenStatusInput[]): Promise<void> {
    let run: ScreenStatusInput[] = []
    const inRun = new Set<string>()
    for (const c of changes) {
      const key = `${c.workspaceId}\u0000${c.screen.id}`
      if (inRun.has(key)) {
        await this.statusRun(run)
        run = []
        inRun.clear()
      }
      inRun.add(key)
      run.push(c)
    }
    if (run.length) await this.statusRun(run)
  }

  /** Transitions of distinct screens. */
  private async statusRun(run: readonly ScreenStatusInput[]): Promise<void> {
    const byWorkspace = new Map<string, ScreenStatusInput[]>()
    for (const c of run) {
      const list = byWorkspace.get(c.workspaceId)
      if (list) list.push(c)
      else byWorkspace.set(c.workspaceId, [c])
    }
    for (const [workspaceId, items] of byWorkspace) {
      const prevs = await this.repo.screenStates(
        workspaceId,
        items.map((c) => c.screen.id),
      )
      const puts: AlertScreenStateRow[] = []
      const recovered: { screenId: string; detail: Record<string, unknown>; when: string }[] = []
      let wentOffline = false
      for (const { screen, status, at } of items) {
        const when = iso(at, this.clock)
        const prev = prevs.get(screen.id)
        const name = screen.name ?? prev?.screen_name ?? UNKNOWN_SCREEN
        const cutoff = new Date(Date.parse(when) - FLAP_WINDOW_MS).toISOString()
        let flaps = (prev ? (JSON.parse(prev.flaps) as string[]) : []).filter((f) => f >= cutoff)
        if (prev && prev.status === status) {
          // A repeated report changes nothing but the name and place.
          puts.push({ ...prev, screen_name: name, node_id: screen.nodeId })
        } else {
          if (status === 'offline') flaps = [...flaps, when]
          puts.push({
            workspace_id: workspaceId,
            screen_id: screen.id,
            screen_name: name,
            node_id: screen.nodeId,
            status,
            since: when,
            flaps: JSON.stringify(flaps),
          })
        }
        if (status === 'offline') {
          wentOffline = true
          continue
        }
        const offlineSince = prev && prev.status === 'offline' ? prev.since : null
        const offlineMinutes = offlineSince ? Math.round((Date.parse(when) - Date.parse(offlineSince)) / 60_000) : null
        const detail =
          flaps.length >= FLAP_COUNT
            ? { kind: 'network-unstable', offlineTimesLastHour: flaps.length, offlineSince, offlineMinutes }
            : { kind: 'recovery', offlineSince, offlineMinutes }
        recovered.push({ screenId: screen.id, detail, when })
      }
      await this.repo.putScreenStates(puts)
      if (recovered.length) {
        const open = await this.repo.openEventsOf(
          workspaceId,
          recovered.map((r) => r.screenId),
          'connection-lost',
        )
        const byScreen = new Map(recovered.map((r) => [r.screenId, r]))
        const rules = new Map<string, Promise<AlertRuleRow | undefined>>()
        for (const ev of open) {
          const r = byScreen.get(ev.screen_id)!
          await this.closeEvent(ev, r.detail, r.when, rules)
        }
      }
      if (wentOffline) await this.checkConnectionLost(workspaceId)
    }
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

  /**
   * The panel's obedience to its operating hours, as the player reports it after its retries:
   * `obeying: false` opens panel-not-obeying; obeying again (or no hours any more) closes it.
   */
  async panelObeyingReported(
    workspaceId: string,
    screen: ScreenRef,
    panel: { power: string; intended?: 'on' | 'off' | undefined; obeying?: boolean | undefined },
    at?: Date | string,
  ): Promise<void> {
    const when = iso(at, this.clock)
    if (panel.obeying === false && panel.intended) {
      const named = await this.named(workspaceId, screen)
      for (const rule of await this.matching(workspaceId, 'panel-not-obeying', screen)) {
        const msg = `${named.name}: the panel should be ${panel.intended} by its operating hours but reads ${panel.power} after the player's retries.`
        await this.open(rule, named, 'panel-not-obeying', msg, { kind: 'panel-not-obeying', intended: panel.intended, power: panel.power }, when)
      }
    } else {
      await this.closeOpen(workspaceId, screen.id, 'panel-not-obeying', { kind: 'recovery', intended: panel.intended ?? null, power: panel.power }, when)
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

  /**
   * The play log refused some of a screen's plays (times it cannot have, more at once than
   * zones, over the workspace's daily quota) or slowed a screen sending faster than its rate.
   */
  async playLogLimited(e: {
    workspaceId: string
    screen: ScreenRef & { name: string }
    refused: { future: number; beforePairing: number; overlap: number; quota: number }
    rate: boolean
    zones: number
    dailyLimit: number
    ratePerSecond: number
    at: string
  }): Promise<void> {
    const rules = await this.matching(e.workspaceId, 'play-log-limited', e.screen)
    if (!rules.length) return
    const r = e.refused
    const parts = [
      r.future && `${r.future} ending in the future`,
      r.beforePairing && `${r.beforePairing} from before it was paired`,
      r.overlap && `${r.overlap} beyond its ${e.zones} zone(s) at once`,
      r.quota && `${r.quota} over the workspace's ${e.dailyLimit} plays a day`,
    ].filter(Boolean)
    const message = `${e.screen.name}: ${[parts.length ? `plays refused (${parts.join(', ')})` : '', e.rate ? `plays sent faster than ${e.ratePerSecond} a second were slowed` : ''].filter(Boolean).join('; ')}.`
    const detail = { kind: 'play-log-limited', refused: r, rate: e.rate, zones: e.zones, dailyLimit: e.dailyLimit, ratePerSecond: e.ratePerSecond }
    for (const rule of rules) await this.open(rule, e.screen, 'play-log-limited', message, detail, e.at)
  }

  /** A screen whose plays were limited has sent clean batches for a while. */
  async playLogRecovered(workspaceId: string, screenId: string, at?: Date | string): Promise<void> {
    const when = iso(at, this.clock)
    await this.closeOpen(workspaceId, screenId, 'play-log-limited', { kind: 'recovery' }, when)
  }

  /** The screen was removed: its open events close as history, its state is forgotten. */
  async screenRemoved(workspaceId: string, screenId: string): Promise<void> {
    const when = this.clock.now().toISOString()
    for (const code of ALERT_CODES) await this.closeOpen(workspaceId, screenId, code, { kind: 'outage-history', reason: 'screen removed' }, when)
    await this.repo.deleteScreenState(workspaceId, screenId)
  }

  /** connection-lost: opens for screens offline longer than the rule's `thresholds.minutes`. */
  async checkConnectionLost(workspaceId?: string): Promise<number> {
    const now = this.clock.now().getTime()
    const offline = await this.repo.offlineScreens(workspaceId)
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

  /**
   * drift: opens for screens drifting longer than the rule's `thresholds.minutes` (default
   * 10); `drifting` are the drifting screens with when they began (the drift domain's read).
   */
  async checkDrift(
    drifting: readonly { id: string; workspace_id: string; name: string; node_id: string | null; drift_since: string | null; drift_items: string | null }[],
  ): Promise<number> {
    const now = this.clock.now().getTime()
    const cache = new Map<string, AlertRuleRow[]>()
    let opened = 0
    for (const s of drifting) {
      if (!s.drift_since) continue
      const screen = { id: s.id, name: s.name, nodeId: s.node_id }
      for (const rule of await this.matching(s.workspace_id, 'drift', screen, cache)) {
        const minutes = numberOr(parseConfig(rule).thresholds.minutes, DEFAULT_DRIFT_MINUTES)
        const driftingMs = now - Date.parse(s.drift_since)
        if (driftingMs < minutes * 60_000) continue
        let items: { field: string; desired: unknown; reported: unknown }[] = []
        try {
          items = JSON.parse(s.drift_items ?? '[]')
        } catch {
          items = []
        }
        const what = items.map((i) => `${i.field} is ${JSON.stringify(i.reported)}, told ${JSON.stringify(i.desired)}`).join('; ')
        const msg = `${screen.name} has been drifting for ${Math.max(1, Math.round(driftingMs / 60_000))} minute(s)${what ? `: ${what}` : ''}.`
        if (await this.open(rule, screen, 'drift', msg, { kind: 'drift', since: s.drift_since, items }, new Date(now).toISOString())) opened++
      }
    }
    return opened
  }

  /** A screen stopped drifting (back in sync, or unknown: offline): its open drift events close. */
  async driftEnded(workspaceId: string, screenId: string, state: string, at: string): Promise<void> {
    await this.closeOpen(workspaceId, screenId, 'drift', { kind: state === 'in_sync' ? 'recovery' : 'drift-unknown', state }, at)
  }

  // ---- rule matching and event rows ----

  /** The screen with a name: the one given, else the last one seen, else `(unknown screen)`. */
  private async named(workspaceId: string, screen: ScreenRef): Promise<ScreenRef & { name: string }> {
    if (screen.name) return { ...screen, name: screen.name }
    const s = await this.repo.screenState(workspaceId, screen.id)
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
            : c.scopeKind === 'group'
              ? // Membership as every group target resolves it, seen from the rule's home.
                (await this.groups.membersAmong(workspaceId, c.scopeId, rule.node_id, [screen.id])).has(screen.id)
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
      await this.repo.insertEvent({
        id,
        workspace_id: rule.workspace_id,
        rule_id: rule.id,
        code,
        severity,
        screen_id: screen.id,
        screen_name: screen.name,
        node_id: screen.nodeId,
        message,
        next_action: NEXT_ACTION[code],
        opened_at: when,
        closed_at: null,
        detail: detail ? JSON.stringify(detail) : null,
      })
    } catch (e) {
      if (isUniqueViolation(e)) return false // already open for this rule and screen
      throw e
    }
    const row = (await this.repo.event(id))!
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
    const open = await this.repo.openEvents(workspaceId, screenId, code, ruleId)
    for (const ev of open) await this.closeEvent(ev, detail, when)
  }

  /**
   * Closes an open event (unless another call closed it meanwhile) and notifies its rule's
   * channels; `rules` keeps the rules read for a batch of events.
   */
  private async closeEvent(
    ev: AlertEventRow,
    detail: Record<string, unknown>,
    when: string,
    rules = new Map<string, Promise<AlertRuleRow | undefined>>(),
  ): Promise<void> {
    if (!(await this.repo.closeEvent(ev.id, when, JSON.stringify(detail)))) return
    let read = rules.get(ev.rule_id)
    if (!read) rules.set(ev.rule_id, (read = this.repo.ruleById(ev.rule_id)))
    const rule = await read
    if (rule) this.notifier.notify(rule, eventView({ ...ev, closed_at: when, detail: JSON.stringify(detail) }), 'closed')
  }

  // ---- reads for /v1/alert-events ----

  async list(
    p: Principal,
    page: PageRequest,
    filter: { state?: string | undefined; screenId?: string | undefined; code?: string | undefined; ruleId?: string | undefined },
  ): Promise<Page<AlertEventView>> {
    const scopeIds = await this.nodes.scopeIds(p)
    const total = page.count ? await this.repo.countEvents(p.workspaceId, scopeIds, filter) : undefined
    const rows = await this.repo.events(p.workspaceId, scopeIds, filter, page)
    return pageOf(rows, page, eventView, total)
  }

  async get(p: Principal, id: string): Promise<AlertEventView> {
    const r = await this.repo.eventIn(p.workspaceId, id, await this.nodes.scopeIds(p))
    if (!r) throw notFound('No such alert event.')
    return eventView(r)
  }
}

function numberOr(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback
}
