// Remote logs: `POST /v1/screens/<id>/logs` queues a `logs` job for the screen (delivered on
// its jobs topic, see AgentLogJobDelivery.ts, like a screenshot); the agent answers with its
// recent log lines and its kiosk page's console messages, PUT as JSON to the job's
// `uploadUrl` (`/v1/devices/agent-logs/<id>`) with its device credential (HTTP Basic,
// screen id : device secret). The upload is bounded (AGENT_LOG_LIMITS: lines, characters
// per message, bytes); the cloud keeps the lines asked for (at or after `since`, the newest
// `lines` of them) as one JSON column, as text whatever characters the lines hold. A request
// without an answer within AGENT_LOG_TTL_MS becomes `expired`; the agent's failed result
// makes it `failed`. Requests and their lines go AGENT_LOG_RETENTION_DAYS after they were
// asked for (housekeeper).
// Bounds on asking and keeping: a screen has at most one open (pending) request (the
// agent_logs_open index, so two instances cannot both open one), at most
// AGENT_LOG_REQUESTS_PER_HOUR requests per clock hour (the shared rate limiter: Redis
// across instances), and the stored lines of a screen and of a workspace have a byte
// budget (config): an upload past either deletes the oldest uploads, newest kept.
import { Type, type Static } from '@sinclair/typebox'
import { AGENT_LOG_LEVELS, AGENT_LOG_SOURCES, type AgentLogLine, type JobResult, type LogsJob } from '@svc/shared/mqtt/index'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import { type Hook, Listeners } from '../../platform/hooks.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import { isUniqueViolation, type Database } from '../../platform/db/Database.js'
import { ApiError, notFound } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import type { RateLimiter } from '../../platform/http/rateLimit.js'
import { deviceScreen, type ScreenService } from '../screens/index.js'
import { SharedSweep } from '../serial/index.js'
import { AgentLogRepository, type AgentLogRow, type AgentLogSummaryRow } from './AgentLogRepository.js'

/** Lines asked for when the request does not say. */
export const AGENT_LOG_DEFAULT_LINES = 1000
/** A request without an upload or a result after this long becomes `expired` (as a screenshot job fails). */
export const AGENT_LOG_TTL_MS = 10 * 60_000
/** Requests (and their lines) are deleted this many days after they were asked for. */
export const AGENT_LOG_RETENTION_DAYS = 7
/** Requests one screen may be asked for per clock hour (fixed windows, counted across instances). */
export const AGENT_LOG_REQUESTS_PER_HOUR = 10
const HOUR_SECONDS = 3600
const REASON_CHARS = 500

/** Bytes of stored lines (their JSON) a screen and a workspace may hold; past either, the oldest uploads go. */
export interface AgentLogBudgets {
  screenBytes: number
  workspaceBytes: number
}

export const AGENT_LOG_STATES = ['pending', 'done', 'failed', 'expired'] as const
export type AgentLogState = (typeof AGENT_LOG_STATES)[number]

export const AgentLogLineSchema = Type.Object({
  at: Timestamp,
  level: StringEnum(AGENT_LOG_LEVELS),
  source: StringEnum(AGENT_LOG_SOURCES, { description: '`agent`: the agent’s own log; `kiosk`: the console of the player page in the kiosk browser.' }),
  message: Type.String(),
})

const summaryFields = {
  id: Type.String({ description: 'Prefix `alog_`.' }),
  screenId: Type.String(),
  state: StringEnum(AGENT_LOG_STATES, {
    description: `\`pending\` until the agent answers (it gets the request when it is connected), then \`done\` (lines uploaded), \`failed\` (see reason) or \`expired\` (no answer within ${AGENT_LOG_TTL_MS / 60_000} minutes).`,
  }),
  reason: Nullable(Type.String({ description: 'Why it failed or expired.' })),
  maxLines: Type.Integer({ description: 'The most lines asked for (the newest).' }),
  since: Nullable(Timestamp),
  requestedAt: Timestamp,
  sentAt: Nullable(Timestamp),
  uploadedAt: Nullable(Timestamp),
  completedAt: Nullable(Timestamp),
  lineCount: Nullable(Type.Integer({ description: 'Lines kept, once `done`.' })),
  truncated: Type.Boolean({ description: 'True when the agent held more matching lines than were kept (the line or byte bound, or its memory).' }),
}

/** A request without its lines: the lists' items. */
export const AgentLogSummary = Type.Object(summaryFields)
export type AgentLogSummaryView = Static<typeof AgentLogSummary>
/** A request with its lines (oldest first; empty until `done`). */
export const AgentLog = Type.Object({ ...summaryFields, lines: Type.Array(AgentLogLineSchema) })
export type AgentLogView = Static<typeof AgentLog>

/** What the agent uploads (validated by the route's schema). */
export interface AgentLogUpload {
  lines: AgentLogLine[]
  truncated?: boolean
}

const summaryView = (r: AgentLogSummaryRow): AgentLogSummaryView => ({
  id: r.id,
  screenId: r.screen_id,
  state: r.state as AgentLogState,
  reason: r.reason,
  maxLines: Number(r.max_lines),
  since: r.since,
  requestedAt: r.requested_at,
  sentAt: r.sent_at,
  uploadedAt: r.uploaded_at,
  completedAt: r.completed_at,
  lineCount: r.line_count === null ? null : Number(r.line_count),
  truncated: Number(r.truncated ?? 0) === 1,
})

const fullView = (r: AgentLogRow): AgentLogView => ({ ...summaryView(r), lines: r.lines ? (JSON.parse(r.lines) as AgentLogLine[]) : [] })

/**
 * The lines of an upload the request asked for: at or after `since`, oldest first (lines
 * at the same time keep the agent's order), the newest `maxLines`; truncated when the agent
 * said it left lines out or this cut some.
 */
export function keptLines(upload: AgentLogUpload, since: string | null, maxLines: number): { lines: AgentLogLine[]; truncated: boolean } {
  const from = since === null ? Number.NEGATIVE_INFINITY : Date.parse(since)
  const dated = upload.lines
    .map((l, i) => ({ l, i, t: Date.parse(l.at) }))
    .filter((x) => x.t >= from)
    .sort((a, b) => a.t - b.t || a.i - b.i)
  const over = Math.max(0, dated.length - maxLines)
  return {
    lines: dated.slice(over).map(({ l, t }) => ({ at: new Date(t).toISOString(), level: l.level, source: l.source, message: l.message })),
    truncated: upload.truncated === true || over > 0,
  }
}

export class AgentLogService {
  private readonly repo: AgentLogRepository
  /** The expiry sweep before a connection's re-send, shared by connections arriving together. */
  private readonly connectSweep: SharedSweep
  private readonly queuedJobs = new Listeners<(screenId: string) => void>()
  /** Jobs were queued for a screen (after they committed): its delivery (devicelink's JobDelivery) joins this when it is built. */
  readonly queued: Hook<(screenId: string) => void> = this.queuedJobs

  private tellQueued(screenId: string): void {
    for (const l of this.queuedJobs.all()) l(screenId)
  }

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly screens: ScreenService,
    private readonly rateLimiter: RateLimiter,
    private readonly budgets: AgentLogBudgets,
    /** Base URL put in front of the upload path (SVC_PUBLIC_URL); null = a path the agent resolves against its cloud. */
    private readonly publicUrl: string | null = null,
  ) {
    this.repo = new AgentLogRepository(db.kysely)
    this.connectSweep = new SharedSweep(clock, () => this.expireStale())
  }

  private now(): string {
    return this.clock.now().toISOString()
  }

  private ttlCutoff(): string {
    return new Date(this.clock.now().getTime() - AGENT_LOG_TTL_MS).toISOString()
  }

  /**
   * Queues a request for the screen's lines; delivered now if it is connected, else when it
   * connects (within the TTL). 409 while the screen has an open request; 429 past
   * AGENT_LOG_REQUESTS_PER_HOUR. What counts: every ask that got past the open-request check
   * (so not a 409 from the read), the refused ones too.
   */
  async request(p: Principal, screenId: string, input: { lines?: number; since?: string }): Promise<AgentLogView> {
    const screen = await this.screens.get(p, screenId)
    await this.expireStale()
    const open = await this.repo.openOf(screen.id)
    if (open) throw this.stillOpen(open)
    const d = await this.rateLimiter.hit(`agent-logs:${screen.id}`, AGENT_LOG_REQUESTS_PER_HOUR, HOUR_SECONDS)
    if (!d.allowed)
      throw new ApiError('rate_limited', `Over the limit of ${d.limit} log requests per screen per hour; retry after ${d.resetSeconds} s.`, {
        extra: { limit: d.limit, windowSeconds: d.windowSeconds, retryAfterSeconds: d.resetSeconds },
        headers: { 'retry-after': String(d.resetSeconds) },
      })
    const row: AgentLogRow = {
      id: this.ids.next('agentLog'),
      workspace_id: p.workspaceId,
      screen_id: screen.id,
      state: 'pending',
      reason: null,
      max_lines: input.lines ?? AGENT_LOG_DEFAULT_LINES,
      since: input.since === undefined ? null : new Date(input.since).toISOString(),
      requested_at: this.now(),
      sent_at: null,
      completed_at: null,
      uploaded_at: null,
      line_count: null,
      truncated: null,
      size_bytes: null,
      lines: null,
    }
    try {
      await this.repo.insert(row)
    } catch (e) {
      // Another instance opened one between the read and the insert.
      const other = isUniqueViolation(e) ? await this.repo.openOf(screen.id) : undefined
      throw other ? this.stillOpen(other) : e
    }
    this.tellQueued(screen.id)
    return fullView(row)
  }

  private stillOpen(open: AgentLogSummaryRow): ApiError {
    const until = new Date(Date.parse(open.requested_at) + AGENT_LOG_TTL_MS).toISOString()
    return new ApiError(
      'conflict',
      `The screen already has an open log request (${open.id}); ask again once it is done, failed or expired (at the latest ${until}).`,
      { extra: { agentLogId: open.id } },
    )
  }

  /** The request if the principal reaches its screen (another workspace's, or outside a pin: 404). */
  private async reach(p: Principal, row: AgentLogSummaryRow | undefined): Promise<AgentLogSummaryRow> {
    if (!row || row.workspace_id !== p.workspaceId) throw notFound('No such agent log.')
    try {
      await this.screens.get(p, row.screen_id)
    } catch (e) {
      if ((e as { code?: string }).code === 'not_found') throw notFound('No such agent log.')
      throw e
    }
    return row
  }

  /** One request with its lines. */
  async get(p: Principal, id: string): Promise<AgentLogView> {
    await this.reach(p, await this.repo.summary(id))
    await this.expireStale()
    const row = await this.repo.withLines(id)
    if (!row) throw notFound('No such agent log.')
    return fullView(row)
  }

  /** A screen's requests, newest first, without their lines. */
  async listForScreen(p: Principal, screenId: string, page: PageRequest): Promise<Page<AgentLogSummaryView>> {
    await this.screens.get(p, screenId)
    await this.expireStale()
    const total = page.count ? await this.repo.countForScreen(p.workspaceId, screenId) : undefined
    return pageOf(await this.repo.listForScreen(p.workspaceId, screenId, page), page, summaryView, total)
  }

  /**
   * Pending requests of a screen, oldest first, as the MQTT job message. With `expire`
   * (default) the ones past their TTL are expired first; without (a job just queued), the
   * read alone leaves them out.
   */
  async pendingFor(screenId: string, opts: { expire?: boolean } = {}): Promise<LogsJob[]> {
    if (opts.expire !== false) await this.connectSweep.run()
    return (await this.repo.openFor(screenId, this.ttlCutoff())).map((r) => this.jobMessage(r))
  }

  /** pendingFor for several screens at once: one sweep, one read per 500 screens (connections arriving together). */
  async pendingForMany(screenIds: readonly string[]): Promise<Map<string, LogsJob[]>> {
    await this.connectSweep.run()
    const rows = await this.repo.openForMany(screenIds, this.ttlCutoff())
    return new Map([...rows].map(([id, list]) => [id, list.map((r) => this.jobMessage(r))]))
  }

  private jobMessage(r: AgentLogSummaryRow): LogsJob {
    const base = this.publicUrl ? this.publicUrl.replace(/\/+$/, '') : ''
    return {
      id: r.id,
      kind: 'logs',
      uploadUrl: `${base}/v1/devices/agent-logs/${r.id}`,
      lines: Number(r.max_lines),
      since: r.since,
      createdAt: r.requested_at,
    }
  }

  markSent(id: string): Promise<void> {
    return this.repo.markSent(id, this.now())
  }

  /** A job result from the screen: a failure closes the request with its reason; `ok` without an upload is a failure too. */
  async applyResult(screenId: string, r: JobResult): Promise<void> {
    const row = await this.repo.summary(r.jobId)
    if (!row || row.screen_id !== screenId || row.state !== 'pending') return
    const reason = r.outcome === 'ok' ? 'the screen reported success but uploaded no lines' : (r.reason ?? `logs ${r.outcome}`)
    await this.repo.complete(row.id, { state: 'failed', reason: reason.slice(0, REASON_CHARS), completed_at: this.now() })
  }

  /** Pending requests past their TTL become `expired`. */
  expireStale(): Promise<number> {
    return this.repo.expireOpen(this.ttlCutoff(), `no answer from the screen within ${AGENT_LOG_TTL_MS / 60_000} minutes`, this.now())
  }

  /**
   * The request `id` if `authorization` is the device credential of its screen (HTTP Basic
   * screenId:deviceSecret); else 401 `missing_credentials` or `invalid_credentials`, the
   * same whether the request exists or not. The route asks before it reads the body.
   */
  async uploader(id: string, authorization: string | undefined): Promise<AgentLogSummaryRow> {
    const screenId = await deviceScreen(this.db, authorization)
    const row = await this.repo.summary(id)
    if (!row || !screenId || row.screen_id !== screenId)
      throw new ApiError('invalid_credentials', 'The device credential does not match the screen these logs are for.')
    return row
  }

  /**
   * The device's upload: `authorization` must be Basic screenId:deviceSecret of the screen the
   * request is for, and the request still pending. Keeps the lines asked for and closes it `done`.
   */
  async upload(id: string, authorization: string | undefined, body: AgentLogUpload): Promise<AgentLogSummaryView> {
    const row = await this.uploader(id, authorization)
    await this.expireStale()
    const current = (await this.repo.summary(id)) ?? row
    if (current.state !== 'pending')
      throw new ApiError('conflict', `The log request is already ${current.state}${current.reason ? ` (${current.reason})` : ''}.`)
    const kept = keptLines(body, current.since, Number(current.max_lines))
    const json = JSON.stringify(kept.lines)
    const now = this.now()
    const closed = await this.repo.complete(id, {
      state: 'done',
      reason: null,
      completed_at: now,
      uploaded_at: now,
      line_count: kept.lines.length,
      truncated: kept.truncated ? 1 : 0,
      size_bytes: Buffer.byteLength(json),
      lines: json,
    })
    if (!closed) throw new ApiError('conflict', 'The log request was closed while the lines were uploading.')
    await this.keepBudgets(current.workspace_id, current.screen_id, id)
    return summaryView((await this.repo.summary(id))!)
  }

  /**
   * Deletes the oldest uploads (by upload time) of the screen past its budget, then of the
   * workspace past its budget; the upload `keep` (the one just stored) always stays.
   */
  private async keepBudgets(workspaceId: string, screenId: string, keep: string): Promise<void> {
    const over = (rows: { id: string; size_bytes: number | null }[], budget: number) => {
      let total = 0
      const out: string[] = []
      for (const r of rows) {
        total += Number(r.size_bytes ?? 0)
        if (total > budget && r.id !== keep) out.push(r.id)
      }
      return out
    }
    // The sums first: the rows are read only when there is something to drop.
    for (const [by, budget] of [
      [{ screenId }, this.budgets.screenBytes],
      [{ workspaceId }, this.budgets.workspaceBytes],
    ] as const) {
      if ((await this.repo.storedBytes(by)) > budget) await this.repo.deleteIds(over(await this.repo.stored(by), budget))
    }
  }

  /** Deletes requests asked for more than AGENT_LOG_RETENTION_DAYS ago, with their lines. */
  async purgeOld(): Promise<number> {
    await this.expireStale()
    return this.repo.deleteBefore(new Date(this.clock.now().getTime() - AGENT_LOG_RETENTION_DAYS * 86_400_000).toISOString())
  }
}
