// Reach receipts of casts and emergencies: per targeted screen, how far the takeover got —
// `targeted` (stored), `published` (a desired state carrying it was handed to the broker for
// the screen), `applied` (the screen reported it playing), `displayed` (applied, and the
// panel's last read-back is on), or `unreachable` (not applied and the screen is offline) —
// with when. And `emergency.reach`, once per emergency, when every screen has applied it or
// 60 s have passed: {emergencyId, targeted, applied, displayed, unreachable}.
import { Type, type Static } from '@sinclair/typebox'
import { PANEL_POWERS, type PanelPower, parseReported } from '@svc/shared/mqtt/index'
import type { Clock } from '../../platform/clock.js'
import { StringEnum, Timestamp } from '../../platform/contract.js'
import type { Database } from '../../platform/db/Database.js'
import { encodeCursor, type Page, type PageRequest } from '../../platform/paging.js'
import type { EventOutbox } from '../events/index.js'
import { ReachRepository, type ReachRow } from './ReachRepository.js'

export const REACH_STATES = ['targeted', 'published', 'applied', 'displayed', 'unreachable'] as const
export type ReachState = (typeof REACH_STATES)[number]
/** How long an emergency has to reach its screens before `emergency.reach` reports what it got. */
export const REACH_WINDOW_MS = 60_000

export const ScreenReach = Type.Object({
  screenId: Type.String(),
  screenName: Type.String(),
  state: StringEnum(REACH_STATES, {
    description:
      '`targeted` → `published` (its desired state handed to the broker) → `applied` (reported playing) → `displayed` (applied, panel on); `unreachable`: not applied and the screen is offline.',
  }),
  at: { ...Timestamp, description: 'When it reached that state (for `unreachable`: since when the screen is offline).' },
  panelPower: StringEnum(PANEL_POWERS, { description: "The panel's power as the screen last reported it; `unknown` without a panel or a reading." }),
})
export type ScreenReachView = Static<typeof ScreenReach>

// A type, not an interface: event payloads are read as plain records.
export type ReachCounts = {
  targeted: number
  /** Screens that reported it playing (displayed ones included). */
  applied: number
  /** Of those, with the panel on. */
  displayed: number
  /** Not applied, and offline. */
  unreachable: number
}

function receipt(r: ReachRow, startedAt: string): ScreenReachView {
  const reported = r.reported ? parseReported(r.reported) : null
  const panelPower: PanelPower = (reported?.ok && reported.value.panel?.power) || 'unknown'
  const base = { screenId: r.screen_id, screenName: r.name, panelPower }
  if (r.applied_at) return { ...base, state: panelPower === 'on' ? 'displayed' : 'applied', at: r.applied_at }
  if (r.status !== 'online') return { ...base, state: 'unreachable', at: r.status_since ?? startedAt }
  if (r.published_at) return { ...base, state: 'published', at: r.published_at }
  return { ...base, state: 'targeted', at: startedAt }
}

export function reachCounts(receipts: readonly ScreenReachView[]): ReachCounts {
  const c: ReachCounts = { targeted: receipts.length, applied: 0, displayed: 0, unreachable: 0 }
  for (const r of receipts) {
    if (r.state === 'applied' || r.state === 'displayed') c.applied++
    if (r.state === 'displayed') c.displayed++
    if (r.state === 'unreachable') c.unreachable++
  }
  return c
}

export class ReachReceipts {
  private readonly repo: ReachRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly outbox: EventOutbox,
  ) {
    this.repo = new ReachRepository(db.kysely)
  }

  /** A page of a takeover's screens with their receipts (the caller has checked the takeover is visible). */
  async page(kind: 'cast' | 'emergency', id: string, startedAt: string, page: PageRequest): Promise<Page<ScreenReachView>> {
    const rows = await this.repo.rows(kind, id, page.after, page.limit === null ? null : page.limit + 1)
    const more = page.limit !== null && rows.length > page.limit
    const kept = more ? rows.slice(0, page.limit!) : rows
    const out: Page<ScreenReachView> = { data: kept.map((r) => receipt(r, startedAt)) }
    if (page.limit !== null) out.nextCursor = more ? encodeCursor(kept.at(-1)!.screen_id) : null
    if (page.count) out.total = await this.repo.count(kind, id)
    return out
  }

  /**
   * Records `emergency.reach` for every active emergency that is due (all its screens applied
   * it, or the window passed), once each; answers how many were recorded.
   */
  async recordDue(): Promise<number> {
    const now = this.clock.now()
    const at = now.toISOString()
    const due = await this.repo.reachDue(new Date(now.getTime() - REACH_WINDOW_MS).toISOString())
    let n = 0
    for (const e of due) {
      const receipts = (await this.repo.rows('emergency', e.id, null, null)).map((r) => receipt(r, at))
      const counts = reachCounts(receipts)
      const recorded = await this.db.transaction(async (tx) => {
        if (!(await new ReachRepository(tx.kysely).markReach(e.id, at))) return false
        await this.outbox.record(tx, { event: 'emergency.reach', workspaceId: e.workspace_id, occurredAt: at, data: { emergencyId: e.id, ...counts, at } })
        return true
      })
      if (recorded) n++
    }
    if (n) this.outbox.dispatch().catch(() => undefined) // handed on behind; the webhook worker retries a failed dispatch
    return n
  }
}

declare module '../events/payloads.js' {
  interface EventData {
    'emergency.reach': ReachCounts & { emergencyId: string; at: string }
  }
}
