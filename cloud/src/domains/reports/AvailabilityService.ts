// The availability report: for each screen of a selection, over a window, how long it was
// online (its presence intervals), its outages, and over its operating hours how long it
// was really showing content: online, the panel not read back off, content playing
// (`displayAvailability`). Short closed stretches are read from the hourly roll-ups
// (AvailabilityRollup), the rest as they are. Screens are read a batch at a time with their intervals, so a
// year over a large fleet is a few linear passes per screen and a CSV streams in constant
// memory; rows per location or group add the screens' figures up.
import { Type, type Static } from '@sinclair/typebox'
import type { Clock } from '../../platform/clock.js'
import { Nullable, StringEnum } from '../../platform/contract.js'
import type { Database } from '../../platform/db/Database.js'
import { validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { decodeCursor } from '../../platform/paging.js'
import { parseTimeRange } from '../../platform/timeRange.js'
import type { EffectiveHours, OperatingHoursRecords } from '../hours/index.js'
import type { NodeService } from '../nodes/index.js'
import type { GroupService } from '../targeting/index.js'
import { figures, hoursOn, parseSpans, type ScreenFigures, type Span } from './intervals.js'
import { type ReportScreen, ReportsRepository, SCREEN_BATCH, type ScreenFilter, type SpansRow } from './ReportsRepository.js'

/** The widest window of a report, days. */
export const AVAILABILITY_MAX_DAYS = 366
const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
/** Operating hours' on-spans kept across reports (by hours, zone and window). */
const SCHEDULES_KEPT = 256

export const AVAILABILITY_GROUP_BY = ['screen', 'node', 'group'] as const
export type AvailabilityGroupBy = (typeof AVAILABILITY_GROUP_BY)[number]
/** Periods a report by location can be cut into (`per`): UTC days from `from`, or weeks of 7 such days. */
export const AVAILABILITY_PER = ['day', 'week'] as const
export type AvailabilityPer = (typeof AVAILABILITY_PER)[number]
const PER_MS: Record<AvailabilityPer, number> = { day: DAY_MS, week: 7 * DAY_MS }

export const AvailabilityRow = Type.Object({
  id: Nullable(Type.String({ description: 'The screen, location or group; null for screens at the workspace root (groupBy node) and for the total.' })),
  name: Type.String(),
  screens: Type.Integer({ minimum: 0, description: 'Screens added up in this row.' }),
  windowSeconds: Type.Number({ minimum: 0, description: "The window, from each screen's creation at the earliest and up to now at the latest." }),
  onlineSeconds: Type.Number({ minimum: 0 }),
  offlineSeconds: Type.Number({ minimum: 0 }),
  availability: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'onlineSeconds ÷ windowSeconds; null for an empty window.' })),
  outages: Type.Integer({ minimum: 0, description: 'Stretches of the window offline.' }),
  longestOutageSeconds: Type.Number({ minimum: 0 }),
  scheduledSeconds: Type.Number({
    minimum: 0,
    description: 'Time the operating hours want the panel on (the whole window for a screen without hours).',
  }),
  displaySeconds: Type.Number({ minimum: 0, description: 'Scheduled time online with the panel not read back off and content playing.' }),
  displayAvailability: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'displaySeconds ÷ scheduledSeconds; null when nothing was scheduled.' })),
})
export type AvailabilityRowT = Static<typeof AvailabilityRow>

export const AvailabilityReport = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  groupBy: StringEnum(AVAILABILITY_GROUP_BY),
  rows: Type.Array(AvailabilityRow),
  total: AvailabilityRow,
  periods: Type.Optional(
    Type.Array(
      Type.Object({
        from: Type.String({ format: 'date-time' }),
        to: Type.String({ format: 'date-time' }),
        rows: Type.Array(AvailabilityRow),
      }),
      { description: 'With `per`: the same rows for each day or week of the window, oldest first (a chart over time in one request).' },
    ),
  ),
})
export type AvailabilityReportT = Static<typeof AvailabilityReport>

export interface AvailabilityQuery {
  from?: string | undefined
  to?: string | undefined
  groupBy?: AvailabilityGroupBy | undefined
  nodeId?: string | undefined
  groupId?: string | undefined
  per?: AvailabilityPer | undefined
}

/** One screen's figures (and, when the report is cut into periods, its figures in each). */
export interface ScreenResult {
  screen: ReportScreen
  figures: ScreenFigures
  periods?: ScreenFigures[]
}

interface Sum {
  screens: number
  windowMs: number
  onlineMs: number
  outages: number
  longestOutageMs: number
  scheduledMs: number
  displayMs: number
}

const emptySum = (): Sum => ({ screens: 0, windowMs: 0, onlineMs: 0, outages: 0, longestOutageMs: 0, scheduledMs: 0, displayMs: 0 })

function add(s: Sum, f: ScreenFigures): void {
  s.screens++
  s.windowMs += f.windowMs
  s.onlineMs += f.onlineMs
  s.outages += f.outages
  s.longestOutageMs = Math.max(s.longestOutageMs, f.longestOutageMs)
  s.scheduledMs += f.scheduledMs
  s.displayMs += f.displayMs
}

function row(id: string | null, name: string, s: Sum): AvailabilityRowT {
  return {
    id,
    name,
    screens: s.screens,
    windowSeconds: s.windowMs / 1000,
    onlineSeconds: s.onlineMs / 1000,
    offlineSeconds: (s.windowMs - s.onlineMs) / 1000,
    availability: s.windowMs > 0 ? s.onlineMs / s.windowMs : null,
    outages: s.outages,
    longestOutageSeconds: s.longestOutageMs / 1000,
    scheduledSeconds: s.scheduledMs / 1000,
    displaySeconds: s.displayMs / 1000,
    displayAvailability: s.scheduledMs > 0 ? s.displayMs / s.scheduledMs : null,
  }
}

/** The screens' spans read as one text each (ReportsRepository.spans). */
function spansOf(rows: readonly SpansRow[], now: number): Map<string, Span[]> {
  const out = new Map<string, Span[]>()
  for (const r of rows) {
    const list: Span[] = []
    parseSpans(r.spans, now, list)
    out.set(r.screen_id, list)
  }
  return out
}

function addSpans(into: Map<string, Span[]>, screenId: string, json: string): void {
  const spans = JSON.parse(json) as Span[]
  if (!spans.length) return
  let list = into.get(screenId)
  if (!list) into.set(screenId, (list = []))
  for (const sp of spans) list.push(sp)
}

/** One batch of screens and what the report reads of them. */
interface BatchRead {
  batch: ReportScreen[]
  presence: SpansRow[]
  showing: SpansRow[]
  rolled: Awaited<ReturnType<ReportsRepository['hours']>>
  hours: Map<string, EffectiveHours | null>
}

/** A resolved report request: its window, its screens' filter, and how rows are formed. */
export interface AvailabilityPlan {
  workspaceId: string
  from: string
  to: string
  groupBy: AvailabilityGroupBy
  filter: ScreenFilter
  principal: Principal
  /** With `per`: the periods' starts and ends (ms), the last one ending at `to`. */
  periods?: [number, number][]
}

export class AvailabilityService {
  private readonly repo: ReportsRepository
  /** Operating hours' on-spans by zone, window and hours, least recently used first (scheduled). */
  private readonly schedules = new Map<string, Span[]>()

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly nodes: Pick<NodeService, 'scopeIds' | 'subtree' | 'resolveHome'>,
    private readonly groups: Pick<GroupService, 'memberCondition' | 'list'>,
    private readonly hours: Pick<OperatingHoursRecords, 'effective'>,
  ) {
    this.repo = new ReportsRepository(db.kysely, db.dialect)
  }

  /** Checks a request (400/422 before anything is answered) and resolves its screens' filter. */
  async plan(p: Principal, q: AvailabilityQuery): Promise<AvailabilityPlan> {
    if (!q.from || !q.to) throw validation('from and to are required.')
    const range = parseTimeRange(q) as { from: string; to: string }
    if (Date.parse(range.to) - Date.parse(range.from) > AVAILABILITY_MAX_DAYS * DAY_MS)
      throw validation(`from and to are at most ${AVAILABILITY_MAX_DAYS} days apart.`)
    const scopeIds = await this.nodes.scopeIds(p)
    const nodeIds = q.nodeId ? await this.nodes.subtree(p.workspaceId, (await this.nodes.resolveHome(p, q.nodeId))!) : null
    const where = q.groupId !== undefined ? await this.groups.memberCondition(p, q.groupId, 'groupId') : undefined
    const plan: AvailabilityPlan = {
      workspaceId: p.workspaceId,
      from: range.from,
      to: range.to,
      groupBy: q.groupBy ?? 'screen',
      filter: { scopeIds, nodeIds, where },
      principal: p,
    }
    if (q.per) {
      if (plan.groupBy !== 'node') throw validation('per needs groupBy=node (the rows of each period are per location).')
      const periods: [number, number][] = []
      const end = Date.parse(range.to)
      for (let at = Date.parse(range.from); at < end; at += PER_MS[q.per]) periods.push([at, Math.min(at + PER_MS[q.per], end)])
      plan.periods = periods
    }
    return plan
  }

  /** Every selected screen's figures, in id order, a batch at a time. */
  async *screens(plan: AvailabilityPlan): AsyncGenerator<ScreenResult[]> {
    const now = this.clock.now().getTime()
    const from = Date.parse(plan.from)
    const to = Math.min(Date.parse(plan.to), now)
    // What a report keeps from one batch for the next (the operating hours' on-spans by
    // source and zone, the locations' lineages) is only what the batch just worked out used:
    // a location's screens are spread over the batches (they come in id order), so it is
    // found again, and the caches hold a batch's worth however many screens and locations the
    // fleet has (a screen with hours of its own is in one batch only).
    const scheduleCache = new Map<string, Span[]>()
    const lineages = new Map<string, Promise<string[]>>()
    // The next batch is read while this one is worked out: the reads (the database's own
    // thread, or PostgreSQL's process) and the interval arithmetic (this one) overlap.
    const load = async (after: string | null): Promise<BatchRead | null> => {
      const batch = await this.repo.screens(plan.workspaceId, plan.filter, after, SCREEN_BATCH)
      if (!batch.length) return null
      const ids = batch.map((s) => s.id)
      const homes = new Set(batch.map((s) => s.node_id))
      for (const k of lineages.keys()) if (!homes.has(k)) lineages.delete(k)
      const [presence, showing, rolled, hours] = await Promise.all([
        this.repo.spans('presence_intervals', ids, plan.from, plan.to),
        this.repo.spans('panel_intervals', ids, plan.from, plan.to),
        this.repo.hours(ids, plan.from, plan.to),
        this.hours.effective(plan.workspaceId, batch, lineages, 'batch'),
      ])
      return { batch, presence, showing, rolled, hours }
    }
    let next: Promise<BatchRead | null> | null = load(null)
    while (next) {
      const read: BatchRead | null = await next
      if (!read) return
      const batch: ReportScreen[] = read.batch
      const { presence, showing: shows, rolled, hours } = read
      next = batch.length < SCREEN_BATCH ? null : load(batch[batch.length - 1]!.id)
      // Not awaited if the reader stops early (a CSV download dropped): its failure is nobody's.
      next?.catch(() => undefined)
      const online = spansOf(presence, now)
      const shown = spansOf(shows, now)
      // The hourly roll-ups hold the rest (stretches folded in are not read raw).
      for (const r of rolled) {
        addSpans(online, r.screen_id, r.online)
        addSpans(shown, r.screen_id, r.showing)
      }
      const out: ScreenResult[] = []
      const used = new Set<string>()
      for (const s of batch) {
        const created = Date.parse(s.created_at)
        const on = online.get(s.id) ?? []
        const showing = shown.get(s.id) ?? []
        const scheduled = this.scheduled(hours.get(s.id) ?? null, s.timezone, from, to, scheduleCache, used)
        out.push({
          screen: s,
          figures: figures(on, showing, scheduled, Math.max(from, created), to),
          // Each period from the same spans (figures cuts them to its window).
          ...(plan.periods ? { periods: plan.periods.map(([a, b]) => figures(on, showing, scheduled, Math.max(a, created), Math.min(b, to))) } : {}),
        })
      }
      for (const k of scheduleCache.keys()) if (!used.has(k)) scheduleCache.delete(k)
      yield out
    }
  }

  /**
   * The hours' on-spans over the whole window, shared by the screens with the same hours and
   * zone in a request (`cache`, `used` the keys a batch asks for), and kept across requests for the same hours, zone and window
   * (a dashboard asking again): worked out up to the end of the window's last hour, so a
   * window ending now finds them again for the rest of that hour (figures cuts them to the
   * window). Their evaluation in a time zone is most of a whole-fleet report's cost otherwise.
   */
  private scheduled(h: EffectiveHours | null, timeZone: string, from: number, to: number, cache: Map<string, Span[]>, used: Set<string>): Span[] | null {
    if (!h) return null
    const key = `${h.source.kind}:${h.source.id}|${timeZone}`
    used.add(key)
    let spans = cache.get(key)
    if (spans) return spans
    const until = Math.ceil(to / HOUR_MS) * HOUR_MS
    const kept = `${timeZone}|${from}|${until}|${JSON.stringify(h.hours)}`
    spans = this.schedules.get(kept)
    if (spans) {
      // Most recently used last (the oldest goes first).
      this.schedules.delete(kept)
    } else {
      spans = hoursOn(h.hours, timeZone, from, until)
      if (this.schedules.size >= SCHEDULES_KEPT) this.schedules.delete(this.schedules.keys().next().value!)
    }
    this.schedules.set(kept, spans)
    cache.set(key, spans)
    return spans
  }

  /** The rows of a report (per screen, location or group) and its total, a batch at a time (screens) or at the end. */
  async *rows(plan: AvailabilityPlan): AsyncGenerator<AvailabilityRowT[], AvailabilityRowT> {
    const total = emptySum()
    if (plan.groupBy === 'screen') {
      for await (const batch of this.screens(plan)) {
        const rows: AvailabilityRowT[] = []
        for (const r of batch) {
          add(total, r.figures)
          const one = emptySum()
          add(one, r.figures)
          rows.push(row(r.screen.id, r.screen.name, one))
        }
        yield rows
      }
      return row(null, 'Total', total)
    }
    if (plan.groupBy === 'node') {
      const sums = new Map<string | null, Sum>()
      for await (const batch of this.screens(plan))
        for (const r of batch) {
          add(total, r.figures)
          let s = sums.get(r.screen.node_id)
          if (!s) sums.set(r.screen.node_id, (s = emptySum()))
          add(s, r.figures)
        }
      const names = await this.repo.nodeNames(
        plan.workspaceId,
        [...sums.keys()].filter((k): k is string => k !== null),
      )
      const keys = [...sums.keys()].sort((a, b) => (a ?? '').localeCompare(b ?? ''))
      yield keys.map((k) => row(k, k === null ? '(workspace root)' : (names.get(k) ?? k), sums.get(k)!))
      return row(null, 'Total', total)
    }
    // Per group: the groups first, then each batch of screens added to the groups it is in (a
    // group's members among the batch's screens), so nothing is kept per screen.
    const groups: { id: string; name: string; where: Awaited<ReturnType<GroupService['memberCondition']>>; sum: Sum }[] = []
    let cursor: string | null = null
    do {
      const page = await this.groups.list(plan.principal, { limit: 100, after: cursor, count: false })
      for (const g of page.data)
        groups.push({ id: g.id, name: g.name, where: await this.groups.memberCondition(plan.principal, g.id, 'groupId'), sum: emptySum() })
      cursor = page.nextCursor ? decodeCursor(page.nextCursor) : null
    } while (cursor)
    for await (const batch of this.screens(plan)) {
      for (const r of batch) add(total, r.figures)
      const ids = batch.map((r) => r.screen.id)
      for (const g of groups) {
        const members = await this.repo.matching(plan.workspaceId, { scopeIds: plan.filter.scopeIds, nodeIds: null, where: g.where }, ids)
        for (const r of batch) if (members.has(r.screen.id)) add(g.sum, r.figures)
      }
    }
    yield groups.map((g) => row(g.id, g.name, g.sum))
    return row(null, 'Total', total)
  }

  /**
   * A report by location cut into the plan's periods: the whole window's rows and total and
   * each period's rows, added up in one pass over the screens.
   */
  private async byNodeAndPeriod(plan: AvailabilityPlan, spans: [number, number][]): Promise<AvailabilityReportT> {
    const total = emptySum()
    const whole = new Map<string | null, Sum>()
    const sums = spans.map(() => new Map<string | null, Sum>())
    const into = (m: Map<string | null, Sum>, k: string | null, f: ScreenFigures) => {
      let s = m.get(k)
      if (!s) m.set(k, (s = emptySum()))
      add(s, f)
    }
    for await (const batch of this.screens(plan))
      for (const r of batch) {
        add(total, r.figures)
        into(whole, r.screen.node_id, r.figures)
        r.periods?.forEach((f, i) => into(sums[i]!, r.screen.node_id, f))
      }
    const names = await this.repo.nodeNames(
      plan.workspaceId,
      [...whole.keys()].filter((k): k is string => k !== null),
    )
    const rowsOf = (m: Map<string | null, Sum>) =>
      [...m.keys()].sort((a, b) => (a ?? '').localeCompare(b ?? '')).map((k) => row(k, k === null ? '(workspace root)' : (names.get(k) ?? k), m.get(k)!))
    return {
      from: plan.from,
      to: plan.to,
      groupBy: plan.groupBy,
      rows: rowsOf(whole),
      total: row(null, 'Total', total),
      periods: spans.map(([a, b], i) => ({ from: new Date(a).toISOString(), to: new Date(b).toISOString(), rows: rowsOf(sums[i]!) })),
    }
  }

  /** The whole report as one answer. */
  async report(p: Principal, q: AvailabilityQuery): Promise<AvailabilityReportT> {
    const plan = await this.plan(p, q)
    if (plan.periods) return this.byNodeAndPeriod(plan, plan.periods)
    const rows: AvailabilityRowT[] = []
    const it = this.rows(plan)
    for (;;) {
      const n = await it.next()
      if (n.done) return { from: plan.from, to: plan.to, groupBy: plan.groupBy, rows, total: n.value }
      rows.push(...n.value)
    }
  }
}
