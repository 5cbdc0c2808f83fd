// Proof of play, cloud half: batches a screen publishes on `svc/v1/screens/<id>/play-log`
// are checked (shared parsePlayLogBatch) and stored in the screen's workspace before the
// broker acknowledges them (see domains/devicelink/DevicePolicy.ts), so an agent that saw the PUBACK
// may forget the batch; storing is idempotent record by record (PlayLogRepository), so a
// batch sent again stores nothing twice. Reads: one screen's plays in a time range, paged,
// and a CSV export of a range for a set of screens.
//
// What one screen may claim is bounded (PlayLogLimits.ts). A record that ends in the future,
// starts before the screen was paired, or would make more plays at once than zones is
// refused; so are records over the workspace's daily quota. Refused records are dropped, the
// rest of the batch is stored, and the batch is acknowledged: a player whose clock is wrong
// must not resend the same records forever. Past the screen's burst a batch waits for its
// PUBACK until the screen's rate allows it (the broker reads nothing more from that device
// meanwhile): nothing is lost, a backlog drains at the rate. A screen's batches are handled
// one after the other. Refusals are counted, logged and reported to the `play-log-limited`
// alert, and so is a screen slowed through more plays than an agent's play log can hold.
import { Type, type Static } from '@sinclair/typebox'
import type { RawBuilder } from 'kysely'
import { Listeners } from '../../platform/hooks.js'
import { parsePlayLogBatch, type MessageIssue, type PanelPower } from '@svc/shared/mqtt/index'
import { systemTimers, wait, type Logger, type Timers } from '@svc/shared'
import type { Principal } from '../../platform/http/Principal.js'
import type { Clock } from '../../platform/clock.js'
import type { Database } from '../../platform/db/Database.js'
import { notFound, validation } from '../../platform/errors.js'
import { Nullable } from '../../platform/contract.js'
import { parseTimeRange } from '../../platform/timeRange.js'
import { decodeCursor, encodeCursor, type Page, type PageRequest } from '../../platform/paging.js'
import type { ContentService } from '../content/index.js'
import type { NodeService } from '../nodes/index.js'
import type { GroupService } from '../targeting/index.js'
import { PlayLogRepository, playRecordId, type PlayLogInput, type PlayLogPosition, type PlayLogRow, type SummaryFilter } from './PlayLogRepository.js'
import { DAY_MS, MemoryDailyCounter, OVERLAP_ROWS, PLAY_CLOCK_SKEW_MS, ScreenRates, overZones, span, type DailyCounter, type Span } from './PlayLogLimits.js'
import type { GroupConditions, ScreenService } from '../screens/index.js'

/** The widest window of a summary, days. */
export const SUMMARY_MAX_DAYS = 92
/** Memory a summary's aggregation may use on PostgreSQL (its per-screen totals: about 60 MB at 10 million plays). */
const SUMMARY_WORK_MEM = '64MB'
/** Contents per summary page unless `limit` says otherwise (at most 500). */
export const SUMMARY_DEFAULT_LIMIT = 100

/** One content's plays in a window (proof of display): the summary route's item schema, and PlaySummaryView is derived from it. */
export const PlaySummary = Type.Object({
  contentKind: Type.Optional(
    Type.String({ description: 'What was assigned, cast or raised (a playlist, a layout, a media file…); per content (groupBy content).' }),
  ),
  contentId: Type.Optional(Type.String({ description: 'Per content (groupBy content).' })),
  day: Type.Optional(Type.String({ description: 'The UTC day `YYYY-MM-DD` the plays started (groupBy day).' })),
  screenId: Type.Optional(Type.String({ description: 'groupBy screen.' })),
  nodeId: Type.Optional(Nullable(Type.String({ description: "The screens' home location; null for the workspace root (groupBy node)." }))),
  groupId: Type.Optional(Type.String({ description: 'groupBy group.' })),
  name: Type.Optional(Type.String({ description: "The screen's, location's or group's name." })),
  plays: Type.Integer({ minimum: 0, description: 'Plays started in the window.' }),
  seconds: Type.Number({ minimum: 0, description: 'Seconds played.' }),
  secondsPanelOn: Type.Number({
    minimum: 0,
    description: 'Seconds played while the panel was on (its power read back when each play started): proof of display.',
  }),
  screens: Type.Integer({ minimum: 0, description: 'Screens that played it.' }),
})
export type PlaySummaryView = Static<typeof PlaySummary>

/** How a summary adds plays up: per content (paged), or all at once per screen, location, group or UTC day. */
export const SUMMARY_GROUP_BY = ['content', 'screen', 'node', 'group', 'day'] as const
export type SummaryGroupBy = (typeof SUMMARY_GROUP_BY)[number]

export interface SummaryQuery {
  from?: string
  to?: string
  nodeId?: string
  groupId?: string
  contentKind?: string
  contentId?: string
}

/** The summary's CSV columns per groupBy. */
export const SUMMARY_CSV_COLUMNS: Record<SummaryGroupBy, readonly (keyof PlaySummaryView)[]> = {
  content: ['contentKind', 'contentId', 'plays', 'seconds', 'secondsPanelOn', 'screens'],
  screen: ['screenId', 'name', 'plays', 'seconds', 'secondsPanelOn', 'screens'],
  node: ['nodeId', 'name', 'plays', 'seconds', 'secondsPanelOn', 'screens'],
  group: ['groupId', 'name', 'plays', 'seconds', 'secondsPanelOn', 'screens'],
  day: ['day', 'plays', 'seconds', 'secondsPanelOn', 'screens'],
}

/** At most this many screens in one export. */
export const CSV_MAX_SCREENS = 100
/** At most this many rows in one export; a larger range is refused (narrow it). */
export const CSV_MAX_ROWS = 100_000
/** Default retention of stored plays, days (SVC_PLAY_LOG_RETENTION_DAYS): 13 months, a year compared with the year before. */
export const PLAY_LOG_RETENTION_DAYS = 395

/** A stored play: the record as the device reported it, plus where and when it arrived. */
export interface PlayView extends PlayLogInput {
  id: string
  screenId: string
  receivedAt: string
  panelPower: PanelPower
  /** The content's and the item's names now (null: gone from the library, or not a library item). */
  contentName?: string | null
  itemName?: string | null
}

/** Records of a batch refused, by reason. */
export interface Refused {
  /** Ends (or starts) later than now, beyond the clock skew allowed. */
  future: number
  /** Starts before the screen was paired, beyond the clock skew allowed. */
  beforePairing: number
  /** Would make more plays at once than the screen has zones. */
  overlap: number
  /** Over the workspace's plays for the day. */
  quota: number
}

export type IngestResult =
  | { ok: true; stored: number; duplicates: number; refused: Refused; waitedMs: number }
  | { ok: false; reason: string; errors?: MessageIssue[] }

/** Settings of the play log (config.ts: SVC_PLAY_LOG_*). */
export interface PlayLogLimitsConfig {
  retentionDays: number
  screenRate: number
  screenBurst: number
  dailyPerZone: number
}

export const DEFAULT_PLAY_LOG_LIMITS: PlayLogLimitsConfig = { retentionDays: PLAY_LOG_RETENTION_DAYS, screenRate: 20, screenBurst: 2000, dailyPerZone: 86_400 }

/** A screen whose plays were limited, as the alert evaluator takes it. */
export interface PlayLogLimited {
  workspaceId: string
  screen: { id: string; name: string; nodeId: string | null }
  refused: Refused
  /** It was slowed by its rate through more plays than an agent holds after an outage. */
  rate: boolean
  zones: number
  dailyLimit: number
  ratePerSecond: number
  at: string
}

/** Where limits go (app wiring: the alerts). */
export interface PlayLogLimitSink {
  limited(e: PlayLogLimited): Promise<void>
  /** A screen that was limited sends clean batches again (or, first after a start, in case an alert was left open). */
  recovered(workspaceId: string, screenId: string, at: string): Promise<void>
}

/** Plays slowed by a screen's rate before it is reported (see slowedAlertPlays). */
export const SLOWED_ALERT_PLAYS = 50_000
/** A limited screen is reported at most this often, and counts as recovered after this long without a limit. */
const REPORT_EVERY_MS = 60_000
const QUIET_MS = 15 * 60_000
/** The workspace's zones and screens are read again after this long. */
const SHAPE_TTL_MS = 60_000

const none = (): Refused => ({ future: 0, beforePairing: 0, overlap: 0, quota: 0 })
const total = (r: Refused): number => r.future + r.beforePairing + r.overlap + r.quota

const view = (r: PlayLogRow, names?: ReadonlyMap<string, string>): PlayView => ({
  id: r.id,
  screenId: r.screen_id,
  source: r.source,
  contentKind: r.content_kind,
  contentId: r.content_id,
  castId: r.cast_id,
  emergencyId: r.emergency_id,
  itemKind: r.item_kind,
  itemId: r.item_id,
  zone: r.zone,
  startedAt: r.started_at,
  endedAt: r.ended_at,
  durationMs: Number(r.duration_ms),
  receivedAt: r.received_at,
  panelPower: r.panel_power as PanelPower,
  ...(names ? { contentName: names.get(r.content_id) ?? null, itemName: names.get(r.item_id) ?? null } : {}),
})

/** `from`/`to` query values to UTC ISO bounds; 422 for anything that is not a date-time. */
/** A decoded `<first>|<second>` cursor (plays: start and id; the summary: kind and id); 422 for anything else. */
function cursorPair(after: string): [string, string] {
  const bar = after.indexOf('|')
  if (bar <= 0 || after.indexOf('|', bar + 1) >= 0) throw validation('cursor is not a cursor this list handed out.')
  return [after.slice(0, bar), after.slice(bar + 1)]
}

function decodePosition(after: string | null): PlayLogPosition | null {
  if (after === null) return null
  const [startedAt, id] = cursorPair(after)
  return { startedAt, id }
}

const CSV_COLUMNS: (keyof PlayView)[] = [
  'screenId',
  'startedAt',
  'endedAt',
  'durationMs',
  'panelPower',
  'source',
  'contentKind',
  'contentId',
  'itemKind',
  'itemId',
  'zone',
  'castId',
  'emergencyId',
  'id',
]

/** One CSV field (RFC 4180); a leading =, +, - or @ is prefixed with ' so spreadsheets do not run it. */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return ''
  let s = String(v)
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

export class PlayLogService {
  private readonly repo: PlayLogRepository
  private readonly limits: PlayLogLimitsConfig
  private readonly rates: ScreenRates
  /** Each screen's batches, one after the other: the promise of the last one, and how many are under way. */
  private readonly queues = new Map<string, { last: Promise<unknown>; pending: number }>()
  /** Per workspace: the zones of its largest layout and its screens, read at `at`. */
  private readonly shapes = new Map<string, { zones: number; screens: number; at: number }>()
  /** Screens limited lately: when last, when last reported. */
  private readonly limitedScreens = new Map<string, { lastAt: number; reportedAt: number }>()
  /** Screens whose clean batch told the sink since this process started (an alert left open before a restart closes). */
  private readonly cleared = new Set<string>()
  /** Aborted on close: batches waiting for their screen's rate give up (unacknowledged). */
  private readonly closing = new AbortController()
  /** Counts since start (tests and logs). */
  readonly stats = { refused: none(), waits: 0 }
  /**
   * A screen slowed by its rate through more plays than this, without its bucket filling up
   * again, is reported: more than the agent's play log holds (16 MiB, about 50,000 plays), so
   * no backlog after an outage.
   */
  slowedAlertPlays = SLOWED_ALERT_PLAYS

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly screens: ScreenService,
    /** The library, for the largest layout's zones (the daily limit per zone). */
    private readonly content: Pick<ContentService, 'mostLayoutZones'>,
    /** Locations: the credential's reach and a location's subtree (the summary's `nodeId`). */
    private readonly nodes: Pick<NodeService, 'scopeIds' | 'subtree' | 'resolveHome'>,
    limits: Partial<PlayLogLimitsConfig> = {},
    private readonly options: {
      timers?: Timers
      counter?: DailyCounter
      log?: Pick<Logger, 'warn'>
      /** Groups, for the summary's `groupId` (its members as every group target selects them). */
      groups?: GroupConditions
    } = {},
    /** Where limited screens are reported (the alerts join while they are wired). */
    private readonly limitSinks: Listeners<PlayLogLimitSink> = new Listeners(),
  ) {
    this.repo = new PlayLogRepository(db.kysely)
    this.limits = { ...DEFAULT_PLAY_LOG_LIMITS, ...limits }
    this.rates = new ScreenRates(clock, this.limits.screenRate, this.limits.screenBurst)
    this.counter = options.counter ?? new MemoryDailyCounter()
  }

  private readonly counter: DailyCounter

  /** Batches waiting for their screen's rate stop waiting and are not stored (the app is closing). */
  close(): void {
    this.closing.abort()
  }

  /**
   * Stores a batch `screenId` published. `ok: false` for a batch that can never be stored
   * (invalid, another screen's records, an unknown screen): the caller drops it. Records the
   * limits refuse are dropped and counted, the rest stored; past the screen's burst the
   * answer waits for its rate. Throws when the database fails, so the message is not
   * acknowledged and the agent sends it again.
   */
  ingest(screenId: string, payload: Buffer | Uint8Array | string): Promise<IngestResult> {
    // One batch of a screen at a time: each is checked against what the one before stored.
    const queue = this.queues.get(screenId)
    const run = (queue?.last ?? Promise.resolve()).then(
      () => this.ingestOne(screenId, payload),
      () => this.ingestOne(screenId, payload),
    )
    const q = queue ?? { last: run, pending: 0 }
    q.last = run
    q.pending++
    this.queues.set(screenId, q)
    const done = () => {
      if (--q.pending === 0 && this.queues.get(screenId) === q) this.queues.delete(screenId)
    }
    run.then(done, done)
    return run
  }

  private async ingestOne(screenId: string, payload: Buffer | Uint8Array | string): Promise<IngestResult> {
    const parsed = parsePlayLogBatch(payload)
    if (!parsed.ok) return { ok: false, reason: 'invalid play-log batch', errors: parsed.errors }
    const records: PlayLogInput[] = []
    for (const [i, r] of parsed.value.records.entries()) {
      if (r.screenId !== screenId)
        return { ok: false, reason: 'a record names another screen', errors: [{ path: `/records/${i}/screenId`, message: 'must be the publishing screen' }] }
      records.push({
        source: r.source,
        contentKind: r.contentKind,
        contentId: r.contentId,
        castId: r.castId,
        emergencyId: r.emergencyId,
        itemKind: r.itemKind,
        itemId: r.itemId,
        zone: r.zone,
        startedAt: new Date(Date.parse(r.startedAt)).toISOString(),
        endedAt: new Date(Date.parse(r.endedAt)).toISOString(),
        durationMs: r.durationMs,
        panelPower: r.panelPower ?? 'unknown',
      })
    }
    const screen = await this.repo.screenForPlays(screenId)
    if (!screen) return { ok: false, reason: 'unknown screen' }
    const workspaceId = screen.workspace_id
    const now = this.clock.now().getTime()
    const refused = none()

    // Times a player can have: ended by now, started after the screen was paired (give or take the skew).
    const latest = now + PLAY_CLOCK_SKEW_MS
    const earliest = Date.parse(screen.created_at) - PLAY_CLOCK_SKEW_MS
    const seen = new Set<string>()
    const candidates: { r: PlayLogInput; id: string; span: Span }[] = []
    for (const r of records) {
      const sp = span(r.startedAt, r.endedAt)
      if (Date.parse(r.endedAt) > latest || sp.s > latest) refused.future++
      else if (sp.s < earliest) refused.beforePairing++
      else {
        const id = playRecordId(screenId, r)
        if (seen.has(id)) continue
        seen.add(id)
        candidates.push({ r, id, span: sp })
      }
    }

    // No more plays at once than zones, counting the screen's stored plays that end after the
    // batch's first start (a record stored already is a re-send: nothing to check or store).
    const shape = await this.shape(workspaceId, now)
    const fresh: PlayLogInput[] = []
    if (candidates.length) {
      const from = new Date(Math.min(...candidates.map((c) => c.span.s))).toISOString()
      const stored = await this.repo.endingAfter(workspaceId, screenId, from, OVERLAP_ROWS)
      const held: Span[] = []
      const storedIds = new Set<string>()
      for (const row of stored) {
        storedIds.add(row.id)
        if (!seen.has(row.id)) held.push(span(row.started_at, row.ended_at))
      }
      for (const c of candidates) {
        if (storedIds.has(c.id)) continue
        if (overZones(c.span, held, shape.zones)) {
          refused.overlap++
          continue
        }
        held.push(c.span)
        fresh.push(c.r)
      }
    }

    // The screen's rate: past its burst the batch waits (the PUBACK with it).
    let waitedMs = 0
    let slowed = false
    if (fresh.length) {
      const rate = this.rates.take(screenId, fresh.length)
      if (rate.waitMs > 0) {
        this.stats.waits++
        // More than an agent's play log can hold: not a backlog after an outage.
        slowed = rate.slowed > this.slowedAlertPlays
        if (slowed) await this.noteLimited(screen, screenId, none(), true, shape, now)
        await wait(this.options.timers ?? systemTimers, rate.waitMs, this.closing.signal)
        // Stopping: not stored, not acknowledged; the agent sends it again to the next process.
        if (this.closing.signal.aborted) throw new Error('the play log is closing')
        waitedMs = rate.waitMs
      }
    }

    // The workspace's quota for the day: what is over it is dropped.
    const dailyLimit = this.limits.dailyPerZone * shape.zones * Math.max(1, shape.screens)
    if (fresh.length) {
      const day = Math.floor(this.clock.now().getTime() / DAY_MS) * DAY_MS
      const used = await this.counter.add(workspaceId, fresh.length, day, DAY_MS)
      const over = Math.min(fresh.length, Math.max(0, used - dailyLimit))
      if (over > 0) {
        refused.quota += over
        fresh.length -= over
      }
    }

    const receivedAt = this.clock.now().toISOString()
    const stored = fresh.length ? await this.db.transaction((tx) => this.repo.insert(workspaceId, screenId, fresh, receivedAt, tx.kysely)) : 0
    // Records stored before (a re-send), twice in the batch, or stored meanwhile.
    const duplicates = records.length - total(refused) - stored
    for (const k of Object.keys(refused) as (keyof Refused)[]) this.stats.refused[k] += refused[k]
    if (total(refused) > 0) await this.noteLimited(screen, screenId, refused, slowed, shape, now)
    else if (!slowed) await this.noteClean(workspaceId, screenId, now)
    return { ok: true, stored, duplicates, refused, waitedMs }
  }

  /** The zones of the workspace's largest layout (at least 1) and its screens, read at most once a minute. */
  private async shape(workspaceId: string, now: number): Promise<{ zones: number; screens: number }> {
    const known = this.shapes.get(workspaceId)
    if (known && now - known.at < SHAPE_TTL_MS && now >= known.at) return known
    const [zones, screens] = await Promise.all([this.content.mostLayoutZones(workspaceId), this.repo.screenCount(workspaceId)])
    const shape = { zones: Math.max(1, zones), screens, at: now }
    this.shapes.set(workspaceId, shape)
    return shape
  }

  /** Logs and reports a limited screen (at most once a minute each); a failed report does not fail the batch. */
  private async noteLimited(
    screen: { workspace_id: string; name: string; node_id: string | null },
    screenId: string,
    refused: Refused,
    rate: boolean,
    shape: { zones: number; screens: number },
    now: number,
  ): Promise<void> {
    const known = this.limitedScreens.get(screenId)
    if (known && now - known.reportedAt < REPORT_EVERY_MS && now >= known.reportedAt) {
      known.lastAt = now
      return
    }
    this.limitedScreens.set(screenId, { lastAt: now, reportedAt: now })
    const e: PlayLogLimited = {
      workspaceId: screen.workspace_id,
      screen: { id: screenId, name: screen.name, nodeId: screen.node_id },
      refused,
      rate,
      zones: shape.zones,
      dailyLimit: this.limits.dailyPerZone * shape.zones * Math.max(1, shape.screens),
      ratePerSecond: this.limits.screenRate,
      at: new Date(now).toISOString(),
    }
    this.options.log?.warn({ screenId, refused, rate, zones: e.zones, dailyLimit: e.dailyLimit }, 'play-log records of a screen refused or slowed')
    for (const sink of this.limitSinks.all())
      await sink.limited(e).catch((err: unknown) => this.options.log?.warn({ err, screenId }, 'reporting a limited play log failed'))
  }

  /** A clean batch: a screen limited before and quiet since is reported recovered (and every screen once per process). */
  private async noteClean(workspaceId: string, screenId: string, now: number): Promise<void> {
    const known = this.limitedScreens.get(screenId)
    if (known) {
      if (now - known.lastAt < QUIET_MS) return
      this.limitedScreens.delete(screenId)
    } else if (this.cleared.has(screenId)) return
    this.cleared.add(screenId)
    for (const sink of this.limitSinks.all())
      await sink
        .recovered(workspaceId, screenId, new Date(now).toISOString())
        .catch((err: unknown) => this.options.log?.warn({ err, screenId }, 'closing a play-log alert failed'))
  }

  /** Deletes plays that started before the retention period (the housekeeper runs it hourly). */
  purgeOld(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - this.limits.retentionDays * 86_400_000).toISOString()
    return this.repo.deleteStartedBefore(cutoff)
  }

  /** One screen's plays started in the range, oldest first, cursor paged. */
  async listForScreen(p: Principal, screenId: string, q: { from?: string; to?: string; order?: 'asc' | 'desc' }, page: PageRequest): Promise<Page<PlayView>> {
    await this.screens.get(p, screenId)
    const range = parseTimeRange(q)
    const rows = await this.repo.list(
      p.workspaceId,
      [screenId],
      range,
      decodePosition(page.after),
      page.limit === null ? null : page.limit + 1,
      q.order ?? 'asc',
    )
    const out: Page<PlayView> = { data: [] }
    const more = page.limit !== null && rows.length > page.limit
    const kept = more ? rows.slice(0, page.limit!) : rows
    const names = await this.repo.contentNames(p.workspaceId, [...new Set(kept.flatMap((r) => [r.content_id, r.item_id]))])
    out.data = kept.map((r) => view(r, names))
    if (page.limit !== null) {
      const last = kept[kept.length - 1]
      out.nextCursor = more && last ? encodeCursor(`${last.started_at}|${last.id}`) : null
    }
    if (page.count) out.total = await this.repo.count(p.workspaceId, [screenId], range)
    return out
  }

  /**
   * Proof of display per content: plays started in [from, to) (at most SUMMARY_MAX_DAYS
   * apart), of the screens the credential reaches at or under `nodeId`, in content order,
   * cursor paged.
   */
  async summary(p: Principal, q: SummaryQuery, page: PageRequest): Promise<Page<PlaySummaryView>> {
    const { range, filter } = await this.summaryFilter(p, q)
    const pair = page.after === null ? null : cursorPair(page.after)
    const after = pair && { kind: pair[0], id: pair[1] }
    const limit = page.limit ?? SUMMARY_DEFAULT_LIMIT
    // On PostgreSQL the per-screen totals are added up in memory rather than spilled to disk:
    // a transaction of its own lets the read raise work_mem for itself only.
    const rows =
      this.db.dialect === 'postgres'
        ? await this.db.transaction(async (tx) => {
            await tx.run(`SET LOCAL work_mem = '${SUMMARY_WORK_MEM}'`)
            return new PlayLogRepository(tx.kysely).summary(p.workspaceId, range, filter, after, limit + 1)
          })
        : await this.repo.summary(p.workspaceId, range, filter, after, limit + 1)
    const kept = rows.slice(0, limit)
    const last = kept[kept.length - 1]
    return {
      data: kept.map((r) => ({
        contentKind: r.content_kind,
        contentId: r.content_id,
        plays: r.plays,
        seconds: r.ms / 1000,
        secondsPanelOn: r.ms_on / 1000,
        screens: r.screens,
      })),
      nextCursor: rows.length > limit && last ? encodeCursor(`${last.content_kind}|${last.content_id}`) : null,
    }
  }

  /** Checks a summary's request (400/422) and resolves what it counts. */
  private async summaryFilter(p: Principal, q: SummaryQuery): Promise<{ range: { from: string; to: string }; filter: SummaryFilter }> {
    if (!q.from || !q.to) throw validation('from and to are required.')
    const range = parseTimeRange(q) as { from: string; to: string }
    if (Date.parse(range.to) - Date.parse(range.from) > SUMMARY_MAX_DAYS * 86_400_000)
      throw validation(`from and to are at most ${SUMMARY_MAX_DAYS} days apart.`)
    if (q.contentId && !q.contentKind) throw validation('contentKind is required with contentId.')
    const scopeIds = await this.nodes.scopeIds(p)
    const nodeIds = q.nodeId ? await this.nodes.subtree(p.workspaceId, (await this.nodes.resolveHome(p, q.nodeId))!) : null
    let where: RawBuilder<boolean> | undefined
    if (q.groupId !== undefined) {
      if (!this.options.groups) throw validation('groupId is not accepted here.')
      where = await this.options.groups.memberCondition(p, q.groupId, 'groupId')
    }
    return { range, filter: { scopeIds, nodeIds, where, contentKind: q.contentKind, contentId: q.contentId } }
  }

  /**
   * The summary added up another way, every row at once: per screen (by id), per home
   * location, per group (each group the credential sees, its members among the screens
   * counted), or per UTC day.
   */
  async summaryBy(p: Principal, q: SummaryQuery, by: Exclude<SummaryGroupBy, 'content'>): Promise<PlaySummaryView[]> {
    const { range, filter } = await this.summaryFilter(p, q)
    const perScreen = await this.repo.perScreen(p.workspaceId, range, filter, by === 'day')
    interface Sum {
      plays: number
      ms: number
      msOn: number
      screens: Set<string>
    }
    const sums = new Map<string | null, Sum>()
    const addTo = (key: string | null, r: (typeof perScreen)[number]) => {
      let s = sums.get(key)
      if (!s) sums.set(key, (s = { plays: 0, ms: 0, msOn: 0, screens: new Set() }))
      s.plays += r.plays
      s.ms += r.ms
      s.msOn += r.ms_on
      s.screens.add(r.screen_id)
    }
    const figures = (s: Sum) => ({ plays: s.plays, seconds: s.ms / 1000, secondsPanelOn: s.msOn / 1000, screens: s.screens.size })
    if (by === 'day') {
      for (const r of perScreen) addTo(r.day, r)
      return [...sums].map(([day, s]) => ({ day: day!, ...figures(s) })).sort((a, b) => a.day.localeCompare(b.day))
    }
    const ids = [...new Set(perScreen.map((r) => r.screen_id))]
    if (by === 'group') {
      const groups = this.options.groups as (GroupConditions & Partial<Pick<GroupService, 'list'>>) | undefined
      if (!groups?.list) throw validation('groupBy group is not accepted here.')
      const out: PlaySummaryView[] = []
      let cursor: string | null = null
      do {
        const page: Page<{ id: string; name: string }> = await groups.list(p, { limit: 100, after: cursor, count: false })
        for (const g of page.data) {
          const members = await this.repo.matching(p.workspaceId, await groups.memberCondition(p, g.id, 'groupId'), ids)
          sums.set(g.id, { plays: 0, ms: 0, msOn: 0, screens: new Set() })
          for (const r of perScreen) if (members.has(r.screen_id)) addTo(g.id, r)
          out.push({ groupId: g.id, name: g.name, ...figures(sums.get(g.id)!) })
        }
        cursor = page.nextCursor ? decodeCursor(page.nextCursor) : null
      } while (cursor)
      return out
    }
    const homes = await this.repo.screenHomes(p.workspaceId, ids)
    if (by === 'screen') {
      for (const r of perScreen) addTo(r.screen_id, r)
      return [...sums].map(([id, s]) => ({ screenId: id!, name: homes.get(id!)?.name ?? id!, ...figures(s) }))
    }
    for (const r of perScreen) addTo(homes.get(r.screen_id)?.node_id ?? null, r)
    const names = await this.repo.nodeNames(
      p.workspaceId,
      [...sums.keys()].filter((k): k is string => k !== null),
    )
    return [...sums]
      .sort(([a], [b]) => (a ?? '').localeCompare(b ?? ''))
      .map(([id, s]) => ({ nodeId: id, name: id === null ? '(workspace root)' : (names.get(id) ?? id), ...figures(s) }))
  }

  /** The summary as CSV lines (RFC 4180, CRLF): a header, then every row (per content: every page). */
  async *summaryCsv(p: Principal, q: SummaryQuery, by: SummaryGroupBy): AsyncGenerator<string> {
    const columns = SUMMARY_CSV_COLUMNS[by]
    const line = (r: PlaySummaryView) => `${columns.map((c) => csvField(r[c])).join(',')}\r\n`
    if (by !== 'content') {
      const rows = await this.summaryBy(p, q, by)
      yield `${columns.join(',')}\r\n`
      for (let i = 0; i < rows.length; i += 500)
        yield rows
          .slice(i, i + 500)
          .map(line)
          .join('')
      return
    }
    let after: string | null = null
    let first = true
    do {
      const page = await this.summary(p, q, { limit: 500, after, count: false } as PageRequest)
      if (first) yield `${columns.join(',')}\r\n`
      first = false
      yield page.data.map(line).join('')
      after = page.nextCursor ? decodeCursor(page.nextCursor) : null
    } while (after)
  }

  /** The CSV export: plays of `screenIds` started in [from, to), oldest first, one line each. */
  async csv(p: Principal, q: { from?: string; to?: string; screenIds?: string }): Promise<string> {
    if (!q.from || !q.to) throw validation('from and to are required.')
    const range = parseTimeRange(q)
    const ids = [
      ...new Set(
        (q.screenIds ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ),
    ]
    if (!ids.length) throw validation('screenIds is required: screen ids separated by commas.')
    if (ids.length > CSV_MAX_SCREENS) throw validation(`screenIds names at most ${CSV_MAX_SCREENS} screens.`)
    for (const id of ids) {
      try {
        await this.screens.get(p, id)
      } catch (e) {
        if ((e as { code?: string }).code === 'not_found') throw notFound(`Screen ${id} not found.`)
        throw e
      }
    }
    const rows = await this.repo.list(p.workspaceId, ids, range, null, CSV_MAX_ROWS + 1)
    if (rows.length > CSV_MAX_ROWS) throw validation(`More than ${CSV_MAX_ROWS} plays in this range; narrow it.`)
    const lines = [CSV_COLUMNS.join(',')]
    for (const r of rows) {
      const v = view(r)
      lines.push(CSV_COLUMNS.map((c) => csvField(v[c])).join(','))
    }
    return `${lines.join('\r\n')}\r\n`
  }
}
