// Proof of play, cloud half: batches a screen publishes on `svc/v1/screens/<id>/play-log`
// are checked (shared parsePlayLogBatch) and stored in the screen's workspace before the
// broker acknowledges them (see broker/DevicePolicy.ts), so an agent that saw the PUBACK
// may forget the batch; storing is idempotent record by record (PlayLogRepository), so a
// batch sent again stores nothing twice. Reads: one screen's plays in a time range, paged,
// and a CSV export of a range for a set of screens.
import { parsePlayLogBatch, type MessageIssue } from '@svc/shared/mqtt/index'
import type { Principal } from '../auth/Principal.js'
import type { Clock } from '../clock.js'
import type { Database } from '../db/Database.js'
import { notFound, validation } from '../errors.js'
import { encodeCursor, type Page, type PageRequest } from '../http/pagination.js'
import { PlayLogRepository, type PlayLogInput, type PlayLogPosition, type PlayLogRange, type PlayLogRow } from '../repositories/PlayLogRepository.js'
import type { ScreenService } from './ScreenService.js'

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
}

export type IngestResult = { ok: true; stored: number; duplicates: number } | { ok: false; reason: string; errors?: MessageIssue[] }

const view = (r: PlayLogRow): PlayView => ({
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
})

/** `from`/`to` query values to UTC ISO bounds; 422 for anything that is not a date-time. */
export function parseRange(q: { from?: string; to?: string }): PlayLogRange {
  const one = (name: string, v: string | undefined): string | null => {
    if (v === undefined || v === '') return null
    const ms = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(v) ? Date.parse(v) : NaN
    if (!Number.isFinite(ms)) throw validation(`${name} must be an ISO 8601 date-time such as 2026-01-31T00:00:00Z.`)
    return new Date(ms).toISOString()
  }
  const range = { from: one('from', q.from), to: one('to', q.to) }
  if (range.from && range.to && range.to < range.from) throw validation('to is before from.')
  return range
}

function decodePosition(after: string | null): PlayLogPosition | null {
  if (after === null) return null
  const bar = after.lastIndexOf('|')
  if (bar <= 0) throw validation('cursor is not a cursor this list handed out.')
  return { startedAt: after.slice(0, bar), id: after.slice(bar + 1) }
}

const CSV_COLUMNS: (keyof PlayView)[] = [
  'screenId',
  'startedAt',
  'endedAt',
  'durationMs',
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
function csvField(v: unknown): string {
  if (v === null || v === undefined) return ''
  let s = String(v)
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

export class PlayLogService {
  private readonly repo: PlayLogRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly screens: ScreenService,
    /** Plays that started longer ago than this are deleted by purgeOld(). */
    private readonly retentionDays = PLAY_LOG_RETENTION_DAYS,
  ) {
    this.repo = new PlayLogRepository(db.kysely)
  }

  /**
   * Stores a batch `screenId` published. `ok: false` for a batch that can never be stored
   * (invalid, another screen's records, an unknown screen): the caller drops it. Throws
   * when the database fails, so the message is not acknowledged and the agent sends it again.
   */
  async ingest(screenId: string, payload: Buffer | Uint8Array | string): Promise<IngestResult> {
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
      })
    }
    const workspaceId = await this.repo.workspaceOfScreen(screenId)
    if (workspaceId === null) return { ok: false, reason: 'unknown screen' }
    const stored = await this.repo.insert(workspaceId, screenId, records, this.clock.now().toISOString())
    return { ok: true, stored, duplicates: records.length - stored }
  }

  /** Deletes plays that started before the retention period (the housekeeper runs it hourly). */
  purgeOld(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - this.retentionDays * 86_400_000).toISOString()
    return this.repo.deleteStartedBefore(cutoff)
  }

  /** One screen's plays started in the range, oldest first, cursor paged. */
  async listForScreen(p: Principal, screenId: string, q: { from?: string; to?: string }, page: PageRequest): Promise<Page<PlayView>> {
    await this.screens.get(p, screenId)
    const range = parseRange(q)
    const rows = await this.repo.list(p.workspaceId, [screenId], range, decodePosition(page.after), page.limit === null ? null : page.limit + 1)
    const out: Page<PlayView> = { data: [] }
    const more = page.limit !== null && rows.length > page.limit
    const kept = more ? rows.slice(0, page.limit!) : rows
    out.data = kept.map(view)
    if (page.limit !== null) {
      const last = kept[kept.length - 1]
      out.nextCursor = more && last ? encodeCursor(`${last.started_at}|${last.id}`) : null
    }
    if (page.count) out.total = await this.repo.count(p.workspaceId, [screenId], range)
    return out
  }

  /** The CSV export: plays of `screenIds` started in [from, to), oldest first, one line each. */
  async csv(p: Principal, q: { from?: string; to?: string; screenIds?: string }): Promise<string> {
    if (!q.from || !q.to) throw validation('from and to are required.')
    const range = parseRange(q)
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
