// Platform status: a periodic self-measurement of the database
// and the broker, incidents managed by operators through the CLI, and the public view
// computed from both. A measurement older than three hours makes the state `unknown`.
// The public view is computed when a measurement is recorded or an incident changes, and
// kept until the next such change or until time alone would change it (the three-hour
// staleness edge, the next UTC day, a resolved incident leaving the recent list); a call
// between those moments reads it from memory. Incidents written by another process (the
// CLI) show from the next measurement.
import { Type, type Static } from '@sinclair/typebox'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import type { Database } from '../../platform/db/Database.js'
import type { IncidentRow as StoredIncident, StatusMeasurementRow } from './tables.js'
import { StatusRepository } from './StatusRepository.js'
import { DatabaseBusyError, notFound, validation } from '../../platform/errors.js'

export const STALE_AFTER_MS = 3 * 3600_000
/** The longest a computed view is served without a look at the database. */
export const MAX_VIEW_AGE_MS = 1_000
export const DAYS_SHOWN = 90
export const RECENT_DAYS = 7
/** A check slower than this counts as degraded. */
export const SLOW_MS = { db: 500, broker: 1000 }

export const INCIDENT_STATUSES = ['investigating', 'identified', 'monitoring', 'resolved'] as const
export const INCIDENT_IMPACTS = ['degraded', 'outage', 'none'] as const
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number]
export type IncidentImpact = (typeof INCIDENT_IMPACTS)[number]
export const DAY_STATES = ['operational', 'degraded', 'outage'] as const
export const PLATFORM_STATES = [...DAY_STATES, 'unknown'] as const
type DayState = (typeof DAY_STATES)[number]
type State = (typeof PLATFORM_STATES)[number]

export interface Probes {
  database(): Promise<number>
  broker(): Promise<number>
}

/** The stored rows with their enumerations narrowed (the service only writes these values). */
type MeasurementRow = Omit<StatusMeasurementRow, 'state'> & { state: DayState }
type IncidentRow = Omit<StoredIncident, 'status' | 'impact'> & { status: IncidentStatus; impact: IncidentImpact }

/** An incident as the API answers it: the route's response schema, and IncidentView is derived from it. */
export const Incident = Type.Object({
  id: Type.String(),
  title: Type.String(),
  status: StringEnum(INCIDENT_STATUSES),
  impact: StringEnum(INCIDENT_IMPACTS),
  startedAt: Timestamp,
  resolvedAt: Nullable(Timestamp),
  updates: Type.Array(Type.Object({ at: Timestamp, status: StringEnum(INCIDENT_STATUSES), message: Type.String() })),
  screensPlaying: Nullable(Type.Boolean()),
})
export type IncidentView = Static<typeof Incident>

const rank: Record<DayState, number> = { operational: 0, degraded: 1, outage: 2 }
const worst = (a: DayState, b: DayState): DayState => (rank[a] >= rank[b] ? a : b)

async function timed(fn: () => Promise<number>): Promise<{ ok: boolean; ms: number | null; error?: string }> {
  try {
    return { ok: true, ms: Math.round((await fn()) * 100) / 100 }
  } catch (e) {
    return { ok: false, ms: null, error: (e as Error).message }
  }
}

export type StatusView = Awaited<ReturnType<StatusService['compute']>>

/** A computed view with its two renderings, valid until `validUntil` (ms) unless a change comes first. */
export interface CurrentStatus {
  view: StatusView
  /** `{"data": view}` serialised once. */
  json: string
  text: string
  validUntil: number
}

export class StatusService {
  /** The last view read from the database, kept so an answer is possible while it is down. */
  private lastView: StatusView | null = null
  private cached: CurrentStatus | null = null
  private computing: Promise<CurrentStatus> | null = null
  /** Bumped by every change, so a computation that began before it is not kept. */
  private generation = 0
  private readonly repo: StatusRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly probes: Probes,
  ) {
    this.repo = new StatusRepository(db.kysely)
  }

  /** Measures database and broker once and records the result. */
  async measure(): Promise<MeasurementRow> {
    const dbCheck = await timed(this.probes.database)
    const brokerCheck = await timed(this.probes.broker)
    let state: DayState = 'operational'
    if (!dbCheck.ok || !brokerCheck.ok) state = 'outage'
    else if ((dbCheck.ms ?? 0) > SLOW_MS.db || (brokerCheck.ms ?? 0) > SLOW_MS.broker) state = 'degraded'
    const row: MeasurementRow = {
      id: this.ids.next('measurement'),
      measured_at: this.clock.now().toISOString(),
      state,
      db_ok: dbCheck.ok ? 1 : 0,
      db_latency_ms: dbCheck.ms,
      broker_ok: brokerCheck.ok ? 1 : 0,
      broker_latency_ms: brokerCheck.ms,
      detail: JSON.stringify({ database: dbCheck.error ?? null, broker: brokerCheck.error ?? null }),
    }
    // When the database itself is down the row cannot be written: that failure is what the view shows.
    try {
      await this.repo.insertMeasurement(row)
    } catch (err) {
      this.generation++
      this.computing = null
      // Until the next measurement (or one interval at most) the outage view is served as is.
      this.cached = this.render(this.unavailableView(err), this.clock.now().getTime() + 60_000)
      throw err
    }
    await this.changed()
    return row
  }

  /** Something the view depends on changed: recompute now (a failure leaves the next call to retry). */
  private async changed(): Promise<void> {
    this.generation++
    this.cached = null
    this.computing = null
    await this.current().catch(() => undefined)
  }

  private render(view: StatusView, validUntil: number): CurrentStatus {
    return { view, json: JSON.stringify({ data: view }), text: statusText(view), validUntil }
  }

  /**
   * The public view, from memory while nothing it depends on has changed; computed from
   * the database otherwise (and then kept). Throws when the database cannot be read.
   */
  async current(): Promise<CurrentStatus> {
    const c = this.cached
    if (c && this.clock.now().getTime() < c.validUntil) return c
    if (this.computing) return this.computing
    const gen = this.generation
    const p = this.compute().then((view) => {
      const out = this.render(view, this.validUntil(view))
      if (gen === this.generation) this.cached = out
      return out
    })
    const clear = (): void => {
      if (this.computing === p) this.computing = null
    }
    p.then(clear, clear)
    this.computing = p
    return p
  }

  /**
   * When time alone would change `v` (the staleness edge, the next UTC day, a recent incident
   * aging out), and at most MAX_VIEW_AGE_MS: incidents written by the CLI in another process
   * reach no in-process change signal, so they show within that.
   */
  private validUntil(v: StatusView): number {
    const now = this.clock.now().getTime()
    const nextDay = Math.floor(now / 86_400_000) * 86_400_000 + 86_400_000
    let until = Math.min(nextDay, now + MAX_VIEW_AGE_MS)
    if (v.computedAt && !v.stale) until = Math.min(until, Date.parse(v.computedAt) + STALE_AFTER_MS + 1)
    for (const i of v.recent) if (i.resolvedAt) until = Math.min(until, Date.parse(i.resolvedAt) + RECENT_DAYS * 86_400_000 + 1)
    return Math.max(until, now + 1)
  }

  /** The view as served (see current()). */
  async view(): Promise<StatusView> {
    return (await this.current()).view
  }

  /** Drops measurements older than the days shown. */
  async prune(): Promise<void> {
    const cutoff = new Date(this.clock.now().getTime() - (DAYS_SHOWN + 1) * 86_400_000).toISOString()
    await this.repo.deleteMeasurementsBefore(cutoff)
  }

  private async incidentViews(rows: IncidentRow[]): Promise<IncidentView[]> {
    const out: IncidentView[] = []
    for (const r of rows) {
      const updates = (await this.repo.updates(r.id)) as { at: string; status: IncidentStatus; message: string }[]
      out.push({
        id: r.id,
        title: r.title,
        status: r.status,
        impact: r.impact,
        startedAt: r.started_at,
        resolvedAt: r.resolved_at,
        updates,
        screensPlaying: r.screens_playing === null ? null : r.screens_playing === 1,
      })
    }
    return out
  }

  /** Computes the view from the database (current() keeps it). */
  private async compute(): Promise<{
    state: State
    computedAt: string | null
    stale: boolean
    latency: { databaseMs: number | null; brokerMs: number | null } | null
    incidents: IncidentView[]
    recent: IncidentView[]
    days: { date: string; state: DayState }[]
  }> {
    const now = this.clock.now()
    const last = (await this.repo.latestMeasurement()) as MeasurementRow | undefined
    const open = await this.incidentViews((await this.repo.openIncidents()) as IncidentRow[])
    const recentCut = new Date(now.getTime() - RECENT_DAYS * 86_400_000).toISOString()
    const recent = await this.incidentViews((await this.repo.resolvedSince(recentCut)) as IncidentRow[])
    const stale = !last || now.getTime() - Date.parse(last.measured_at) > STALE_AFTER_MS
    // A stale measurement turns `operational` into `unknown`; an incident operators declared
    // still shows its impact, since that needs no measurement to be true.
    let measured: DayState = stale ? 'operational' : last.state
    for (const i of open) if (i.impact !== 'none') measured = worst(measured, i.impact)
    const state: State = stale && measured === 'operational' ? 'unknown' : measured
    const view = {
      state,
      computedAt: last?.measured_at ?? null,
      stale,
      latency: last ? { databaseMs: last.db_latency_ms, brokerMs: last.broker_latency_ms } : null,
      incidents: open,
      recent,
      days: await this.days(now),
    }
    this.lastView = view
    return view
  }

  /**
   * The answer when view() itself fails because the database cannot be read (200 even
   * during an outage): that failure is the measurement — `outage` (or `degraded` while the
   * database is only busy), measured now — with incidents and history from the last good view.
   */
  unavailableView(err: unknown): StatusView {
    const now = this.clock.now()
    const busy = err instanceof DatabaseBusyError || (err as { cause?: unknown })?.cause instanceof DatabaseBusyError
    const state: DayState = busy ? 'degraded' : 'outage'
    const known = new Map((this.lastView?.days ?? []).map((d) => [d.date, d.state]))
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
    const days: { date: string; state: DayState }[] = []
    for (let i = 0; i < DAYS_SHOWN; i++) {
      const date = new Date(today - (DAYS_SHOWN - 1 - i) * 86_400_000).toISOString().slice(0, 10)
      const s = known.get(date) ?? 'operational'
      days.push({ date, state: i === DAYS_SHOWN - 1 ? worst(s, state) : s })
    }
    let overall: DayState = state
    for (const i of this.lastView?.incidents ?? []) if (i.impact !== 'none') overall = worst(overall, i.impact)
    return {
      state: overall,
      computedAt: now.toISOString(),
      stale: false,
      latency: { databaseMs: null, brokerMs: null },
      incidents: this.lastView?.incidents ?? [],
      recent: this.lastView?.recent ?? [],
      days,
    }
  }

  /** 90 entries, oldest first, ending today (UTC): the worst of measurements and incident impact that day. */
  private async days(now: Date): Promise<{ date: string; state: DayState }[]> {
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
    const first = new Date(today - (DAYS_SHOWN - 1) * 86_400_000)
    const byDay = new Map<string, DayState>()
    for (const r of await this.repo.measurementsSince(first.toISOString())) {
      const day = r.measured_at.slice(0, 10)
      byDay.set(day, worst(byDay.get(day) ?? 'operational', r.state as DayState))
    }
    const incidents = (await this.repo.activeSince(first.toISOString())) as IncidentRow[]
    const out: { date: string; state: DayState }[] = []
    for (let i = 0; i < DAYS_SHOWN; i++) {
      const start = today - (DAYS_SHOWN - 1 - i) * 86_400_000
      const date = new Date(start).toISOString().slice(0, 10)
      let s = byDay.get(date) ?? 'operational'
      for (const inc of incidents) {
        if (inc.impact === 'none') continue
        const from = Date.parse(inc.started_at)
        const to = inc.resolved_at ? Date.parse(inc.resolved_at) : now.getTime()
        if (from < start + 86_400_000 && to >= start) s = worst(s, inc.impact)
      }
      out.push({ date, state: s })
    }
    return out
  }

  async openIncident(input: { title: string; impact: string; status?: string; message?: string; screensPlaying?: boolean | null }): Promise<IncidentView> {
    if (!input.title?.trim()) throw validation('title must not be empty.')
    const impact = checkEnum(input.impact, INCIDENT_IMPACTS, 'impact')
    const status = checkEnum(input.status ?? 'investigating', INCIDENT_STATUSES, 'status')
    if (status === 'resolved') throw validation('a new incident cannot start resolved.')
    const id = this.ids.next('incident')
    const now = this.clock.now().toISOString()
    await this.db.transaction((tx) =>
      this.repo.insertIncident(
        {
          id,
          title: input.title.trim(),
          status,
          impact,
          screens_playing: input.screensPlaying === undefined || input.screensPlaying === null ? null : input.screensPlaying ? 1 : 0,
          started_at: now,
          resolved_at: null,
        },
        { id: this.ids.next('incident'), incident_id: id, at: now, status, message: input.message?.trim() || input.title.trim() },
        tx.kysely,
      ),
    )
    await this.changed()
    return this.incident(id)
  }

  async incident(id: string): Promise<IncidentView> {
    const r = (await this.repo.incident(id)) as IncidentRow | undefined
    if (!r) throw notFound(`No incident ${id}.`)
    return (await this.incidentViews([r]))[0]!
  }

  /** Adds an update; status `resolved` resolves the incident. */
  async updateIncident(id: string, input: { status: string; message: string; impact?: string; screensPlaying?: boolean | null }): Promise<IncidentView> {
    const current = await this.incident(id)
    if (current.resolvedAt) throw validation(`incident ${id} is already resolved.`)
    const status = checkEnum(input.status, INCIDENT_STATUSES, 'status')
    if (!input.message?.trim()) throw validation('message must not be empty.')
    const impact = input.impact ? checkEnum(input.impact, INCIDENT_IMPACTS, 'impact') : current.impact
    const now = this.clock.now().toISOString()
    const playing = input.screensPlaying === undefined ? current.screensPlaying : input.screensPlaying
    await this.db.transaction((tx) =>
      this.repo.updateIncident(
        id,
        { status, impact, screens_playing: playing === null ? null : playing ? 1 : 0, resolved_at: status === 'resolved' ? now : null },
        { id: this.ids.next('incident'), incident_id: id, at: now, status, message: input.message.trim() },
        tx.kysely,
      ),
    )
    await this.changed()
    return this.incident(id)
  }

  async listIncidents(): Promise<IncidentView[]> {
    return this.incidentViews((await this.repo.incidents()) as IncidentRow[])
  }
}

function checkEnum<T extends string>(v: string, allowed: readonly T[], field: string): T {
  if (!(allowed as readonly string[]).includes(v)) throw validation(`${field} must be one of ${allowed.join(', ')}.`)
  return v as T
}

/** The plain-text rendering of `GET /v1/status?format=text`. */
export function statusText(v: StatusView): string {
  const lines = [`state: ${v.state}${v.stale ? ' (stale)' : ''}`, `computed at: ${v.computedAt ?? 'never'}`]
  if (v.latency) lines.push(`latency: database ${v.latency.databaseMs ?? '-'} ms, broker ${v.latency.brokerMs ?? '-'} ms`)
  lines.push(`open incidents: ${v.incidents.length}`)
  for (const i of v.incidents) lines.push(`- [${i.impact}] ${i.title} (${i.status}, since ${i.startedAt})`)
  if (v.recent.length) {
    lines.push(`recently resolved: ${v.recent.length}`)
    for (const i of v.recent) lines.push(`- ${i.title} (resolved ${i.resolvedAt})`)
  }
  const bad = v.days.filter((d) => d.state !== 'operational')
  lines.push(`last ${v.days.length} days: ${v.days.length - bad.length} operational, ${bad.length} not`)
  return `${lines.join('\n')}\n`
}
