// Serial jobs: bytes for one screen's panel, expanded at queue
// time from a template command or a literal value. The database row is the source of
// truth: a job stays `queued` until it is handed to a connected device (`sent`), and any
// job without a result is handed over again when the screen reconnects or the cloud
// restarts (the agent dedupes by job id). The device's result closes it (`ok`, `nak`,
// `timeout`, `failed`); a job without a result after SERIAL_JOB_TTL_MS fails as `expired`.
import { encodeCommand, hexPreview, isSerialEncodingError } from '@svc/shared/serial/index'
import { isPanelProtocolName, panelPreset, type PanelProtocolName } from '@svc/shared/panels/index'
import type { JobResult, SerialJob as SerialJobMessage } from '@svc/shared/mqtt/index'
import { Type, type Static } from '@sinclair/typebox'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import { type Hook, Listeners } from '../../platform/hooks.js'
import type { Database } from '../../platform/db/Database.js'
import { notFound, validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import { SerialJobRepository } from './SerialRepository.js'
import { resolveTargets, type GroupConditions, type ScreenRecords } from '../screens/index.js'
import type { NodeService } from '../nodes/index.js'
import type { ScreenService } from '../screens/index.js'
import type { ScreenPanelService } from '../screens/index.js'
import type { SerialTemplateService } from './SerialTemplateService.js'
import { SharedSweep } from './SharedSweep.js'
import type { RowWith } from '../../platform/db/schema.js'
import type { SerialJobsTable } from './tables.js'

/** A job not answered within a day is failed: a power command run a day late surprises people. */
export const SERIAL_JOB_TTL_MS = 24 * 3600_000

export const SERIAL_JOB_STATUSES = ['queued', 'sent', 'ok', 'nak', 'timeout', 'failed'] as const
export type SerialJobStatus = (typeof SERIAL_JOB_STATUSES)[number]
/** What is kept of a device's job result: a panel's reply is a few bytes; a reason a line. */
export const RESULT_LIMITS = { replyBytes: 1024, sentBytes: 1024, reasonChars: 500 } as const
const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s)

const OPEN: readonly SerialJobStatus[] = ['queued', 'sent']

type JobRow = RowWith<SerialJobsTable, { status: SerialJobStatus }>

/** Panel protocols a serial job can read its reply with. */
export const PANEL_PROTOCOLS = ['samsung-mdc', 'lg', 'nec', 'pjlink', 'cec'] as const

/** A serial job as the API answers it: the routes' response schema, and SerialJobView is derived from it. */
export const SerialJob = Type.Object({
  id: Type.String({ description: 'Prefix `sjob_`.' }),
  screenId: Type.String(),
  templateId: Nullable(Type.String()),
  itemId: Nullable(Type.String()),
  bytesHex: Type.String({ description: 'The bytes sent, expanded at queue time, as space-separated hex pairs.' }),
  protocol: Nullable(StringEnum<string>(PANEL_PROTOCOLS, { description: 'Panel protocol used to read the reply; null = raw (reply ends on silence).' })),
  status: StringEnum(SERIAL_JOB_STATUSES),
  replyHex: Nullable(Type.String({ description: 'Reply bytes as space-separated hex pairs (possibly partial on timeout).' })),
  reason: Nullable(Type.String({ description: 'Why a job failed (`expired` when no result came within 24 hours).' })),
  createdAt: Timestamp,
  sentAt: Nullable(Timestamp),
  completedAt: Nullable(Timestamp),
})
export type SerialJobView = Static<typeof SerialJob>

/** What to send: a saved command, or a literal value. */
export interface SerialCommandBody {
  templateId?: string
  itemId?: string
  value?: unknown
  encoding?: unknown
  eol?: unknown
  /** Reply framing override: a panel protocol, or `raw`. Default: the screen's panel profile. */
  protocol?: string
  timeoutMs?: number
}

export interface SerialScopeBody extends SerialCommandBody {
  scopeKind?: 'screens' | 'node' | 'group' | 'all'
  screenIds?: string[]
  scopeNodeId?: string
  /** A group's members (scopeKind `group`, implied when only groupId is sent). */
  groupId?: string
}

const spaced = (contiguous: string): string => hexPreview(Buffer.from(contiguous, 'hex'))

const view = (r: JobRow): SerialJobView => ({
  id: r.id,
  screenId: r.screen_id,
  templateId: r.template_id,
  itemId: r.item_id,
  bytesHex: spaced(r.bytes_hex),
  protocol: r.protocol,
  status: r.status,
  replyHex: r.reply_hex === null ? null : spaced(r.reply_hex),
  reason: r.reason,
  createdAt: r.created_at,
  sentAt: r.sent_at,
  completedAt: r.completed_at,
})

/** A panel's last commanded power and input (serial jobs that succeeded), with when. */
export interface PanelIntent {
  power?: { value: string; at: string }
  input?: { value: string; at: string }
}

export class SerialJobService {
  private readonly queuedJobs = new Listeners<(screenId: string) => void>()
  /** Jobs were queued for a screen (after they committed): its delivery (devicelink's JobDelivery) joins this when it is built. */
  readonly queued: Hook<(screenId: string) => void> = this.queuedJobs

  private tellQueued(screenId: string): void {
    for (const l of this.queuedJobs.all()) l(screenId)
  }
  private readonly jobs: SerialJobRepository
  /** The expiry sweep before a connection's re-send, shared by connections arriving together. */
  private readonly connectSweep: SharedSweep

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly screens: ScreenService,
    /** The screens' rows a target selects. */
    private readonly screenRows: Pick<ScreenRecords, 'targets'>,
    private readonly panels: ScreenPanelService,
    private readonly templates: SerialTemplateService,
    /** How a `groupId` target selects its screens. */
    private readonly groups: GroupConditions | undefined = undefined,
    readonly ttlMs: number = SERIAL_JOB_TTL_MS,
  ) {
    this.jobs = new SerialJobRepository(db.kysely)
    this.connectSweep = new SharedSweep(clock, () => this.expireStale())
  }

  /** Queues one job for one screen the credential reaches. */
  async queue(p: Principal, screenId: string, body: SerialCommandBody): Promise<SerialJobView> {
    await this.screens.get(p, screenId)
    const cmd = await this.command(p, body)
    const [job] = await this.insert(p.workspaceId, [screenId], cmd)
    return job!
  }

  /** Queues the command for every reachable screen of a scope (as casts target screens). */
  async queueScope(p: Principal, body: SerialScopeBody): Promise<SerialJobView[]> {
    const targets = (
      await resolveTargets(
        this.nodes,
        this.screenRows,
        p,
        {
          scopeKind: body.scopeKind ?? (body.groupId !== undefined ? 'group' : undefined),
          screenIds: body.screenIds,
          scopeNodeId: body.scopeNodeId,
          groupId: body.groupId,
        },
        { groups: this.groups },
      )
    ).screens.map((s) => s.id)
    const cmd = await this.command(p, body)
    return this.insert(p.workspaceId, targets, cmd)
  }

  async get(p: Principal, id: string): Promise<SerialJobView> {
    const r = (await this.jobs.withScreenNode(p.workspaceId, id)) as (JobRow & { node_id: string | null }) | undefined
    if (!r || !(await this.nodes.reaches(p, r.node_id))) throw notFound('No such serial job.')
    return view(await this.expireIfStale(r))
  }

  /** A screen's jobs, newest first; paged when `limit` is sent. */
  async listForScreen(p: Principal, screenId: string, page: PageRequest): Promise<Page<SerialJobView>> {
    await this.screens.get(p, screenId)
    await this.expireStale()
    const total = page.count ? await this.jobs.countForScreen(p.workspaceId, screenId) : undefined
    const rows = (await this.jobs.listForScreen(p.workspaceId, screenId, page)) as JobRow[]
    return pageOf(rows, page, view, total)
  }

  /**
   * Jobs of a screen still waiting for a result, oldest first, as the MQTT job message. With
   * `expire` (default) open jobs past their TTL are failed first (one UPDATE); without, the
   * read alone leaves them out (a job just queued: no write on the request's path).
   */
  async pendingFor(screenId: string, opts: { expire?: boolean } = {}): Promise<SerialJobMessage[]> {
    let rows: JobRow[]
    if (opts.expire === false) rows = (await this.jobs.openFor(screenId, new Date(this.clock.now().getTime() - this.ttlMs).toISOString())) as JobRow[]
    else {
      // Shared by the connections arriving together (a connect storm); the read leaves out what crossed its TTL since.
      await this.connectSweep.run()
      rows = (await this.jobs.openFor(screenId, new Date(this.clock.now().getTime() - this.ttlMs).toISOString())) as JobRow[]
    }
    return rows.map(jobMessage)
  }

  /** pendingFor (with the expiry) for several screens at once: one sweep, one read per 500 screens (connections arriving together). */
  async pendingForMany(screenIds: readonly string[]): Promise<Map<string, SerialJobMessage[]>> {
    await this.connectSweep.run()
    const rows = await this.jobs.openForMany(screenIds, new Date(this.clock.now().getTime() - this.ttlMs).toISOString())
    return new Map([...rows].map(([id, list]) => [id, (list as JobRow[]).map(jobMessage)]))
  }

  /** Records that a job went to the device's session. */
  async markSent(jobId: string): Promise<void> {
    await this.jobs.markSent(jobId, this.clock.now().toISOString())
  }

  /**
   * Applies a device's result, each field cut to RESULT_LIMITS (a device may send up to the
   * 1 MiB packet limit; what is stored and served stays small). Only the screen the job was queued for can close it; a
   * closed job stays closed, except `expired`, which a late real result replaces.
   */
  async applyResult(screenId: string, result: JobResult): Promise<boolean> {
    // One conditional write: only the screen the job was queued for, only while it is open.
    return this.jobs.completeOpen(result.jobId, screenId, {
      status: result.outcome,
      reply_hex: result.replyHex.slice(0, RESULT_LIMITS.replyBytes * 2).toLowerCase(),
      sent_hex: result.sentHex.slice(0, RESULT_LIMITS.sentBytes * 2).toLowerCase(),
      reason: result.reason === undefined ? null : cut(result.reason, RESULT_LIMITS.reasonChars),
      at: this.clock.now().toISOString(),
    })
  }

  /** Fails every open job older than the TTL; returns how many. */
  async expireStale(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - this.ttlMs).toISOString()
    const now = this.clock.now().toISOString()
    return this.jobs.expireBefore(cutoff, now)
  }

  /** Screens that have open jobs (for delivery on start). */
  async screensWithPending(): Promise<string[]> {
    return this.jobs.screensWithOpen()
  }

  private async expireIfStale(r: JobRow): Promise<JobRow> {
    if (!OPEN.includes(r.status) || this.clock.now().getTime() - Date.parse(r.created_at) <= this.ttlMs) return r
    await this.expireStale()
    return ((await this.jobs.byId(r.id)) as JobRow | undefined) ?? r
  }

  private async command(
    p: Principal,
    body: SerialCommandBody,
  ): Promise<{ bytes: Buffer; templateId: string | null; itemId: string | null; protocol: string | null | undefined; timeoutMs: number | null }> {
    let protocol: string | null | undefined
    if (body.protocol !== undefined) {
      if (body.protocol === 'raw') protocol = null
      else if (isPanelProtocolName(body.protocol)) protocol = body.protocol
      else throw validation('protocol must be samsung-mdc, lg, nec, pjlink, cec or raw.')
    }
    const timeoutMs = body.timeoutMs ?? null
    const hasTemplate = body.templateId !== undefined || body.itemId !== undefined
    if (hasTemplate) {
      if (body.value !== undefined) throw validation('Send either templateId and itemId, or value (with encoding and eol), not both.')
      if (!body.templateId || !body.itemId) throw validation('templateId and itemId are both required to send a saved command.')
      const r = await this.templates.resolve(p, body.templateId, body.itemId)
      return { bytes: r.bytes, templateId: r.templateId, itemId: r.itemId, protocol, timeoutMs }
    }
    if (body.value === undefined) throw validation('value is required (or templateId and itemId).')
    try {
      return { bytes: encodeCommand({ value: body.value, encoding: body.encoding, eol: body.eol }), templateId: null, itemId: null, protocol, timeoutMs }
    } catch (err) {
      if (isSerialEncodingError(err)) throw validation(`value: ${err.message}.`)
      throw err
    }
  }

  private async insert(
    workspaceId: string,
    screenIds: string[],
    cmd: { bytes: Buffer; templateId: string | null; itemId: string | null; protocol: string | null | undefined; timeoutMs: number | null },
  ): Promise<SerialJobView[]> {
    const now = this.clock.now().toISOString()
    const ids: string[] = []
    // Read before the transaction: statements outside it would wait for it to end.
    const protocols = new Map<string, string | null>()
    for (const screenId of screenIds) {
      protocols.set(screenId, cmd.protocol !== undefined ? cmd.protocol : ((await this.panels.panelProfile(workspaceId, screenId))?.protocol ?? null))
    }
    const rows = screenIds.map((screenId) => {
      const id = this.ids.next('serialJob')
      ids.push(id)
      return {
        id,
        workspace_id: workspaceId,
        screen_id: screenId,
        bytes_hex: cmd.bytes.toString('hex'),
        protocol: protocols.get(screenId) ?? null,
        timeout_ms: cmd.timeoutMs,
        template_id: cmd.templateId,
        item_id: cmd.itemId,
        status: 'queued',
        reply_hex: null,
        sent_hex: null,
        reason: null,
        created_at: now,
        sent_at: null,
        completed_at: null,
      }
    })
    // One statement per chunk, all in one transaction: every job of the scope or none.
    await this.db.transaction(async (tx) => {
      for (let i = 0; i < rows.length; i += 200) await this.jobs.insertMany(rows.slice(i, i + 200), tx.kysely)
    })
    for (const screenId of new Set(screenIds)) this.tellQueued(screenId)
    const byId = new Map(((await this.jobs.byIds(ids)) as JobRow[]).map((r) => [r.id, r]))
    // Views are read after delivery started: a connected screen's jobs may already show `sent`.
    return ids.map((id) => view(byId.get(id)!))
  }

  /**
   * What each screen's panel was last told to do, from the serial jobs that succeeded: the
   * newest power command (`power.on` / `power.off` of the screen's protocol and set id, as
   * the presets send them) and the newest input command. Jobs whose bytes are not a preset
   * power or input command say nothing.
   */
  async panelIntents(workspaceId: string, screens: readonly { id: string; protocol: PanelProtocolName; setId: number }[]): Promise<Map<string, PanelIntent>> {
    const out = new Map<string, PanelIntent>()
    const groups = new Map<string, { ids: string[]; meaning: Map<string, string> }>()
    for (const s of screens) {
      const key = `${s.protocol}|${s.setId}`
      let g = groups.get(key)
      if (!g) {
        let commands: { key: string; hexPreview: string }[] = []
        try {
          commands = panelPreset(s.protocol, s.setId).commands
        } catch {
          commands = [] // a set id the protocol cannot address: no preset commands
        }
        const meaning = new Map(
          commands.filter((c) => /^(power\.(on|off)|input\.(?!status))/.test(c.key)).map((c) => [c.hexPreview.replaceAll(' ', '').toLowerCase(), c.key]),
        )
        g = { ids: [], meaning }
        groups.set(key, g)
      }
      g.ids.push(s.id)
    }
    for (const g of groups.values()) {
      for (const r of await this.jobs.lastOkOf(workspaceId, g.ids, [...g.meaning.keys()])) {
        const key = g.meaning.get(r.bytes_hex)
        if (!key || !r.at) continue
        const [what, value] = key.split('.') as ['power' | 'input', string]
        const intent = out.get(r.screen_id) ?? {}
        const was = intent[what]
        if (!was || was.at < r.at) intent[what] = { value, at: r.at }
        out.set(r.screen_id, intent)
      }
    }
    return out
  }
}

/** A job row as the MQTT job message. */
function jobMessage(r: JobRow): SerialJobMessage {
  return {
    id: r.id,
    kind: 'serial' as const,
    bytesHex: r.bytes_hex,
    protocol: r.protocol,
    ...(r.timeout_ms !== null ? { timeoutMs: r.timeout_ms } : {}),
    createdAt: r.created_at,
  }
}
