// Drift: whether a screen does what it was told. Judged from what the cloud holds (the
// desired state it publishes, the panel commands it sent) against what the device reports:
//   content        the applied desired version lags the published one for longer than the
//                  grace, or, on the current version, what plays is not what the player's
//                  own decision (@svc/shared/playback) says for now (5 s of clock skew allowed);
//   panel.power    the panel's reported power differs from what its operating hours want (as
//                  the player reports `intended`), else from the last power command that
//   panel.input    succeeded (a panel off because it was told off is in sync); same for input.
//   agent.version  the agent's reported version differs from the one its latest rollout (not
//                  aborted, its stage begun) moves it to.
// A panel the player reports not obeying its hours also sends `screen.panel_mismatch`.
// `unknown` while the screen is offline or before it reports. Judged when a screen reports,
// comes online or goes offline, and by a sweep of screens that did not answer a new desired
// state. A change between in_sync and drifting is recorded in the events outbox
// (`screen.drifting`, `screen.in_sync`) with the stored drift, in one transaction.
import { decidePlayback, toPlaying } from '@svc/shared/playback/index'
import { isPanelProtocolName } from '@svc/shared/panels/index'
import { type DesiredState, parseReported, type Playing, type Reported } from '@svc/shared/mqtt/index'
import type { Clock } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { type Hook, Listeners } from '../../platform/hooks.js'
import type { DesiredStateBuilder } from '../devicelink/index.js'
import type { DomainEvent, EventOutbox } from '../events/index.js'
import { type DriftInputRow, type DriftItem, type DriftState, driftOf, PANEL_DEFAULT_SET_ID, type ScreenRecords } from '../screens/index.js'
import type { PanelIntent, SerialJobService } from '../serial/index.js'

/** How long a published desired state may go unapplied before the content counts as drifting. */
export const DRIFT_GRACE_MS = 60_000
/** Clock difference between player and cloud tolerated when comparing what plays. */
export const DRIFT_SKEW_MS = 5_000
/** Screens judged per batch. */
const BATCH = 500

export interface DriftChange {
  workspaceId: string
  screenId: string
  state: DriftState
  since: string
  items: DriftItem[]
}

function parsed(text: string | null): Reported | null {
  if (!text) return null
  const r = parseReported(text)
  return r.ok ? r.value : null
}

const samePlaying = (a: Playing, b: Playing): boolean =>
  a.source === b.source &&
  a.contentKind === b.contentKind &&
  a.contentId === b.contentId &&
  (a.castId ?? null) === (b.castId ?? null) &&
  (a.emergencyId ?? null) === (b.emergencyId ?? null)

export class DriftService {
  constructor(
    private readonly db: Database,
    private readonly screens: Pick<ScreenRecords, 'driftInputs' | 'setDrift' | 'unansweredSince' | 'drifting'>,
    private readonly desired: Pick<DesiredStateBuilder, 'buildMany'>,
    private readonly serial: Pick<SerialJobService, 'panelIntents'>,
    private readonly outbox: EventOutbox,
    private readonly clock: Clock,
    private readonly log: { error(obj: unknown, msg: string): void },
    private readonly graceMs = DRIFT_GRACE_MS,
    /** Judging waits for it (the publisher's FanOutWindow: a fan-out's reads and writes go first). */
    private readonly gate: { clear(): Promise<void> } | null = null,
    /** The agent version each screen's latest rollout moves it to (agent updates). */
    private readonly agentTargets: { targetVersions(screenIds: readonly string[]): Promise<Map<string, string>> } | null = null,
  ) {}

  private queued = new Map<string, Set<string>>()
  private flushing: Promise<void> | null = null
  private readonly listeners = new Listeners<(c: DriftChange) => void | Promise<void>>()

  /** Told of every stored change of a screen's drift state (the alerts close theirs on it). */
  get changes(): Hook<(c: DriftChange) => void | Promise<void>> {
    return this.listeners
  }

  /**
   * Judges the screen soon, with the others queued meanwhile (reports arrive in bursts: a
   * fan-out's thousands of screens are judged a batch at a time, not one by one).
   */
  queue(workspaceId: string, screenId: string): void {
    let ids = this.queued.get(workspaceId)
    if (!ids) this.queued.set(workspaceId, (ids = new Set()))
    ids.add(screenId)
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush())
  }

  /** Resolves once every queued judgement is stored (tests, and shutdown). */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing
  }

  private async flush(): Promise<void> {
    try {
      // Behind a fan-out in progress: the reports it causes are judged once it is out.
      await this.gate?.clear()
      while (this.queued.size) {
        const batch = this.queued
        this.queued = new Map()
        for (const [ws, ids] of batch) {
          try {
            await this.evaluate(ws, [...ids])
          } catch (err) {
            this.log.error({ err, workspaceId: ws }, 'judging drift failed')
          }
        }
      }
    } finally {
      this.flushing = null
    }
  }

  /** Judges these screens of the workspace now, storing what changed. */
  async evaluate(workspaceId: string, screenIds: readonly string[]): Promise<void> {
    for (let i = 0; i < screenIds.length; i += BATCH) await this.batch(workspaceId, screenIds.slice(i, i + BATCH))
  }

  /** Judges the online screens that have not answered a desired state published more than the grace ago. */
  async sweep(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - this.graceMs).toISOString()
    const due = await this.screens.unansweredSince(cutoff, 5000)
    const byWorkspace = new Map<string, string[]>()
    for (const r of due) {
      const ids = byWorkspace.get(r.workspace_id)
      if (ids) ids.push(r.id)
      else byWorkspace.set(r.workspace_id, [r.id])
    }
    for (const [ws, ids] of byWorkspace) await this.evaluate(ws, ids)
    return due.length
  }

  /** Drifting screens (all workspaces, or one) with when they began to drift: the alert check reads them. */
  drifting(workspaceId?: string) {
    return this.screens.drifting(workspaceId)
  }

  private async batch(workspaceId: string, ids: readonly string[]): Promise<void> {
    const rows = await this.screens.driftInputs(workspaceId, ids)
    if (!rows.length) return
    const now = this.clock.now()
    const reported = new Map(rows.map((r) => [r.id, parsed(r.reported)]))
    // What plays is compared on the version the device holds: the desired state as published now.
    const current = rows.filter((r) => r.status === 'online' && reported.get(r.id)?.version === Number(r.desired_version)).map((r) => r.id)
    const states = await this.desired.buildMany(workspaceId, current)
    const panels = rows.flatMap((r) =>
      r.panel_protocol && isPanelProtocolName(r.panel_protocol)
        ? [{ id: r.id, protocol: r.panel_protocol, setId: r.panel_set_id === null ? PANEL_DEFAULT_SET_ID : Number(r.panel_set_id) }]
        : [],
    )
    const intents = await this.serial.panelIntents(workspaceId, panels)
    const agents = (await this.agentTargets?.targetVersions(rows.map((r) => r.id))) ?? new Map<string, string>()
    const changes = rows.flatMap((r) => {
      const c = this.change(r, this.judge(r, reported.get(r.id) ?? null, states.get(r.id) ?? null, intents.get(r.id) ?? {}, now, agents.get(r.id)), now)
      return c ? [c] : []
    })
    if (changes.length) await this.store(workspaceId, changes, now.toISOString())
  }

  private judge(
    r: DriftInputRow,
    reported: Reported | null,
    desired: DesiredState | null,
    intent: PanelIntent,
    now: Date,
    agentVersion?: string,
  ): { state: DriftState; items: Omit<DriftItem, 'since'>[] } {
    if (r.status !== 'online' || !reported) return { state: 'unknown', items: [] }
    const items: Omit<DriftItem, 'since'>[] = []
    const version = Number(r.desired_version)
    if (reported.version < version) {
      const published = r.desired_published_at ? Date.parse(r.desired_published_at) : Number.NaN
      if (!(now.getTime() - published < this.graceMs)) items.push({ field: 'content', desired: { version }, reported: { version: reported.version } })
    } else if (desired) {
      const should = [now, new Date(now.getTime() - DRIFT_SKEW_MS)].map((at) => toPlaying(decidePlayback(desired, at)))
      if (!should.some((p) => samePlaying(p, reported.playing)))
        items.push({ field: 'content', desired: { version, playing: should[0] }, reported: { version: reported.version, playing: reported.playing } })
    }
    const panel = reported.panel
    // The operating hours' intent (the player computes it with the same shared code) wins over
    // the last power command: a panel off during its off hours is in sync.
    const wantedPower = panel?.intended ?? intent.power?.value
    if (wantedPower && panel?.power && panel.power !== 'unknown' && (panel.power !== wantedPower || panel.obeying === false))
      items.push({ field: 'panel.power', desired: wantedPower, reported: panel.power, ...(panel.obeying === false ? { obeying: false } : {}) })
    if (intent.input && panel?.input && panel.input !== intent.input.value)
      items.push({ field: 'panel.input', desired: intent.input.value, reported: panel.input })
    // The version its latest rollout moves it to (one that went back by itself drifts).
    if (agentVersion !== undefined && reported.agentVersion !== agentVersion)
      items.push({ field: 'agent.version', desired: agentVersion, reported: reported.agentVersion ?? null })
    return { state: items.length ? 'drifting' : 'in_sync', items }
  }

  /** What a judgement changes on the stored drift, or null when nothing. */
  private change(r: DriftInputRow, judged: { state: DriftState; items: Omit<DriftItem, 'since'>[] }, now: Date): StoredChange | null {
    const was = driftOf(r)
    const at = now.toISOString()
    // An item keeps its `since` while the same field still differs.
    const items: DriftItem[] = judged.items.map((i) => ({ ...i, since: was.items.find((w) => w.field === i.field)?.since ?? at }))
    const since = judged.state === was.state ? was.since : at
    const text = items.length ? JSON.stringify(items) : null
    if (judged.state === was.state && text === (r.drift_items ?? null) && since === was.since) return null
    const flipped = judged.state !== was.state && judged.state !== 'unknown' && !(was.state === 'unknown' && judged.state === 'in_sync')
    // Once per mismatch: when the item first says the player gave up on its retries.
    const panelItem = items.find((i) => i.field === 'panel.power' && i.obeying === false)
    const mismatch = panelItem && !was.items.some((w) => w.field === 'panel.power' && w.obeying === false) ? panelItem : null
    return { r, state: judged.state, was: was.state, since, text, items, flipped, mismatch }
  }

  /** Stores a batch's changes in one transaction, with their events; then tells the listeners. */
  private async store(workspaceId: string, changes: readonly StoredChange[], at: string): Promise<void> {
    try {
      await this.db.transaction(async (tx) => {
        // The batch's events in one multi-row insert, in the order of its changes.
        const events: DomainEvent[] = []
        for (const c of changes) {
          const { r } = c
          await this.screens.setDrift(workspaceId, r.id, { drift_state: c.state, drift_since: c.since, drift_items: c.text }, tx.kysely)
          if (c.mismatch)
            events.push({
              event: 'screen.panel_mismatch',
              workspaceId,
              occurredAt: at,
              data: { screenId: r.id, screenName: r.name, nodeId: r.node_id, intended: String(c.mismatch.desired), power: String(c.mismatch.reported), at },
            })
          if (c.flipped) {
            const screen = { screenId: r.id, screenName: r.name, nodeId: r.node_id, since: c.since ?? at, items: c.items }
            if (c.state === 'drifting') events.push({ event: 'screen.drifting', workspaceId, occurredAt: at, data: { ...screen, state: 'drifting' } })
            else events.push({ event: 'screen.in_sync', workspaceId, occurredAt: at, data: { ...screen, state: 'in_sync' } })
          }
        }
        await this.outbox.recordMany(tx, events)
      })
    } catch (err) {
      this.log.error({ err, workspaceId, screens: changes.length }, 'storing drift judgements failed')
      return
    }
    if (changes.some((c) => c.flipped || c.mismatch)) this.outbox.dispatch().catch(() => undefined) // handed on behind; the webhook worker retries a failed dispatch
    for (const c of changes) {
      if (c.state === c.was) continue
      for (const l of this.listeners.all()) {
        try {
          await l({ workspaceId, screenId: c.r.id, state: c.state, since: c.since ?? at, items: c.items })
        } catch (err) {
          this.log.error({ err, screenId: c.r.id }, 'a drift listener failed')
        }
      }
    }
  }
}

interface StoredChange {
  r: DriftInputRow
  state: DriftState
  was: DriftState
  since: string | null
  text: string | null
  items: DriftItem[]
  flipped: boolean
  mismatch: DriftItem | null
}

declare module '../events/payloads.js' {
  interface EventData {
    'screen.drifting': { screenId: string; screenName: string; nodeId: string | null; state: 'drifting'; since: string; items: DriftItem[] }
    'screen.in_sync': { screenId: string; screenName: string; nodeId: string | null; state: 'in_sync'; since: string; items: DriftItem[] }
    /** The player reports its panel not following the operating hours after its retries. */
    'screen.panel_mismatch': { screenId: string; screenName: string; nodeId: string | null; intended: string; power: string; at: string }
  }
}
