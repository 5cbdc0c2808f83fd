// Reports mailed on a cadence: a subscription names a report (availability or proof of
// play), its query, `weekly` or `monthly`, and its recipients. When a period ends (Monday
// 00:00 UTC for a week, the 1st 00:00 UTC for a month) the worker, on the one instance
// holding its work lease, builds the report over the period that ended and mails it through
// the outbox: a CSV attachment and a short text summary. A subscription is claimed (its
// next due time moved on by a conditional update) before its mail is built, so a period is
// mailed at most once however many instances run; a cloud down over several periods mails
// the last one when it is back. The report runs with the reach of the credential that
// created the subscription (its pinned location).
import { Type, type Static } from '@sinclair/typebox'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import type { Database } from '../../platform/db/Database.js'
import { notFound, validation } from '../../platform/errors.js'
import { actorRef, type Principal } from '../../platform/http/Principal.js'
import { IntervalWorker } from '../../platform/workers/Worker.js'
import type { Mailer } from '../mail/index.js'
import type { NodeService } from '../nodes/index.js'
import type { PlayLogService } from '../playlog/index.js'
import { AVAILABILITY_GROUP_BY, type AvailabilityRowT, type AvailabilityService } from './AvailabilityService.js'
import { availabilityCsvHeader, availabilityCsvLine } from './csv.js'
import type { ReportSubscriptionsTable } from './tables.js'

export const REPORT_KINDS = ['availability', 'proof-of-play'] as const
export const CADENCES = ['weekly', 'monthly'] as const
export const PROOF_GROUP_BY = ['content', 'screen', 'node', 'group', 'day'] as const
/** Subscriptions per workspace at most. */
export const MAX_SUBSCRIPTIONS = 100
/** Recipients per subscription at most. */
export const MAX_RECIPIENTS = 20
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const DAY_MS = 86_400_000

export const SubscriptionParams = Type.Object(
  {
    groupBy: Type.Optional(
      StringEnum(['screen', 'node', 'group', 'content', 'day'] as const, {
        description: 'How rows are formed: availability `screen | node | group`; proof of play `content | screen | node | group | day`.',
      }),
    ),
    nodeId: Type.Optional(Type.String({ maxLength: 100, description: 'Only screens at this location or under it.' })),
    groupId: Type.Optional(Type.String({ maxLength: 100, description: "Only this group's members." })),
    contentKind: Type.Optional(Type.String({ maxLength: 32, description: 'Proof of play: only this kind of content.' })),
    contentId: Type.Optional(Type.String({ maxLength: 256, description: 'Proof of play: only this content (with contentKind).' })),
  },
  { additionalProperties: false },
)
export type SubscriptionParamsT = Static<typeof SubscriptionParams>

export const ReportSubscription = Type.Object({
  id: Type.String({ description: 'Prefix `rsub_`.' }),
  report: StringEnum(REPORT_KINDS),
  params: SubscriptionParams,
  cadence: StringEnum(CADENCES),
  recipients: Type.Array(Type.String()),
  scopeNodeId: Nullable(Type.String({ description: "The creating credential's pinned location: the report reaches no further. null = the workspace." })),
  createdBy: Type.String(),
  createdAt: Timestamp,
  nextRunAt: Timestamp,
  lastSentAt: Nullable(Timestamp),
})
export type ReportSubscriptionT = Static<typeof ReportSubscription>

export const CreateSubscription = Type.Object(
  {
    report: StringEnum(REPORT_KINDS),
    params: Type.Optional(SubscriptionParams),
    cadence: StringEnum(CADENCES),
    recipients: Type.Array(Type.String({ maxLength: 254 }), { minItems: 1, maxItems: MAX_RECIPIENTS, description: 'E-mail addresses.' }),
  },
  { additionalProperties: false },
)
export type CreateSubscriptionT = Static<typeof CreateSubscription>

/** The end of the period going on at `at` (the next Monday 00:00 UTC, or the next 1st 00:00 UTC), strictly after `at`. */
export function periodEnd(cadence: string, at: number): number {
  const d = new Date(at)
  if (cadence === 'monthly') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
  // Days to the next Monday (getUTCDay: 0 Sunday … 1 Monday).
  return midnight + ((8 - d.getUTCDay()) % 7 || 7) * DAY_MS
}

/** The start of the period that ends at `end`. */
export function periodStart(cadence: string, end: number): number {
  if (cadence === 'monthly') {
    const d = new Date(end)
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1)
  }
  return end - 7 * DAY_MS
}

/** The last period end at or before `at`. */
function lastPeriodEnd(cadence: string, at: number): number {
  return periodStart(cadence, periodEnd(cadence, at))
}

function view(r: ReportSubscriptionsTable): ReportSubscriptionT {
  return {
    id: r.id,
    report: r.report as ReportSubscriptionT['report'],
    params: JSON.parse(r.params) as SubscriptionParamsT,
    cadence: r.cadence as ReportSubscriptionT['cadence'],
    recipients: JSON.parse(r.recipients) as string[],
    scopeNodeId: r.scope_node_id,
    createdBy: r.created_by,
    createdAt: r.created_at,
    nextRunAt: r.next_run_at,
    lastSentAt: r.last_sent_at,
  }
}

const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(2)} %`)

export class ReportSubscriptions {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: Pick<NodeService, 'scopeIds'>,
    private readonly availability: AvailabilityService,
    private readonly playLog: Pick<PlayLogService, 'summaryBy' | 'summaryCsv' | 'summary'>,
    private readonly mailer: Pick<Mailer, 'send'>,
    private readonly log: { error(obj: unknown, msg: string): void },
  ) {}

  /** The principal a subscription's report runs as: its creator's reach in its workspace. */
  private principalOf(r: ReportSubscriptionsTable): Principal {
    return {
      actor: { kind: 'key', id: null, name: `report subscription ${r.id}`, nodeId: r.scope_node_id },
      workspaceId: r.workspace_id,
      grant: ['screen.view'],
      nodeId: r.scope_node_id,
    }
  }

  async create(p: Principal, input: CreateSubscriptionT): Promise<ReportSubscriptionT> {
    const recipients = [...new Set(input.recipients.map((r) => r.trim().toLowerCase()))]
    const bad = recipients.find((r) => !EMAIL.test(r))
    if (bad !== undefined) throw validation(`recipients: ${JSON.stringify(bad)} is not an e-mail address.`)
    const params = input.params ?? {}
    const now = this.clock.now().getTime()
    // The query is checked as the report would run it (a one-day window): a bad groupBy,
    // location, group or content is refused now, not at the first mail.
    const from = new Date(now - DAY_MS).toISOString()
    const to = new Date(now).toISOString()
    if (input.report === 'availability') {
      if (params.groupBy && !(AVAILABILITY_GROUP_BY as readonly string[]).includes(params.groupBy))
        throw validation(`params.groupBy of an availability report is one of ${AVAILABILITY_GROUP_BY.join(', ')}.`)
      if (params.contentKind || params.contentId) throw validation('params.contentKind and contentId are for proof-of-play reports.')
      await this.availability.plan(p, { from, to, groupBy: params.groupBy as never, nodeId: params.nodeId, groupId: params.groupId })
    } else {
      if (params.contentId && !params.contentKind) throw validation('params.contentKind is required with contentId.')
      await this.playLog.summary(
        p,
        { from, to, nodeId: params.nodeId, groupId: params.groupId, contentKind: params.contentKind },
        { limit: 1, after: null, count: false },
      )
    }
    const k = this.db.kysely
    const n = await k
      .selectFrom('report_subscriptions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', p.workspaceId)
      .executeTakeFirstOrThrow()
    if (Number(n.n) >= MAX_SUBSCRIPTIONS) throw validation(`A workspace has at most ${MAX_SUBSCRIPTIONS} report subscriptions.`)
    const row: ReportSubscriptionsTable = {
      id: this.ids.next('reportSubscription'),
      workspace_id: p.workspaceId,
      report: input.report,
      params: JSON.stringify(params),
      cadence: input.cadence,
      recipients: JSON.stringify(recipients),
      scope_node_id: p.nodeId,
      created_by: actorRef(p),
      created_at: new Date(now).toISOString(),
      next_run_at: new Date(periodEnd(input.cadence, now)).toISOString(),
      last_sent_at: null,
    }
    await k.insertInto('report_subscriptions').values(row).execute()
    return view(row)
  }

  /** The subscriptions the credential sees: all of the workspace, or those made within its pinned location. */
  async list(p: Principal): Promise<ReportSubscriptionT[]> {
    let q = this.db.kysely.selectFrom('report_subscriptions').selectAll().where('workspace_id', '=', p.workspaceId)
    const scope = await this.nodes.scopeIds(p)
    if (scope !== null) q = q.where('scope_node_id', 'in', scope.length ? scope : ['-'])
    return (await q.orderBy('id').execute()).map(view)
  }

  async get(p: Principal, id: string): Promise<ReportSubscriptionT> {
    const found = (await this.list(p)).find((s) => s.id === id)
    if (!found) throw notFound(`Report subscription ${id} not found.`)
    return found
  }

  async remove(p: Principal, id: string): Promise<{ id: string; deleted: true }> {
    await this.get(p, id)
    await this.db.kysely.deleteFrom('report_subscriptions').where('id', '=', id).where('workspace_id', '=', p.workspaceId).execute()
    return { id, deleted: true }
  }

  /** Mails every subscription whose period has ended; resolves with how many were mailed. */
  async runDue(): Promise<number> {
    const now = this.clock.now().getTime()
    const nowIso = new Date(now).toISOString()
    const due = await this.db.kysely
      .selectFrom('report_subscriptions')
      .selectAll()
      .where('next_run_at', '<=', nowIso)
      .orderBy('next_run_at')
      .limit(100)
      .execute()
    let sent = 0
    for (const r of due) {
      const end = lastPeriodEnd(r.cadence, now)
      const claimed = await this.db.kysely
        .updateTable('report_subscriptions')
        .set({ next_run_at: new Date(periodEnd(r.cadence, now)).toISOString(), last_sent_at: nowIso })
        .where('id', '=', r.id)
        .where('next_run_at', '=', r.next_run_at)
        .executeTakeFirst()
      if (Number(claimed.numUpdatedRows) !== 1) continue
      try {
        await this.mail(r, periodStart(r.cadence, end), end)
        sent++
      } catch (err) {
        this.log.error({ err, subscription: r.id }, 'report subscription failed')
      }
    }
    return sent
  }

  private async mail(r: ReportSubscriptionsTable, start: number, end: number): Promise<void> {
    const p = this.principalOf(r)
    const params = JSON.parse(r.params) as SubscriptionParamsT
    const from = new Date(start).toISOString()
    const to = new Date(end).toISOString()
    const period = `${from.slice(0, 10)} to ${new Date(end - 1).toISOString().slice(0, 10)} (UTC)`
    let csv = ''
    const summary: string[] = []
    let name: string
    if (r.report === 'availability') {
      name = 'availability'
      const plan = await this.availability.plan(p, { from, to, groupBy: params.groupBy as never, nodeId: params.nodeId, groupId: params.groupId })
      csv += availabilityCsvHeader(plan.groupBy)
      // The three lowest rows, kept as the rows go by (in row order among equals), not every row.
      const worst: AvailabilityRowT[] = []
      const it = this.availability.rows(plan)
      let total: AvailabilityRowT
      for (;;) {
        const n = await it.next()
        if (n.done) {
          total = n.value
          break
        }
        for (const row of n.value) {
          csv += availabilityCsvLine(row)
          if (row.availability === null) continue
          const at = worst.findIndex((w) => w.availability! > row.availability!)
          if (at >= 0) worst.splice(at, 0, row)
          else worst.push(row)
          if (worst.length > 3) worst.pop()
        }
      }
      csv += availabilityCsvLine(total)
      summary.push(
        `Availability of ${total.screens} screen${total.screens === 1 ? '' : 's'}, ${period}:`,
        `  online ${pct(total.availability)} of the time, ${total.outages} outage${total.outages === 1 ? '' : 's'} (longest ${Math.round(total.longestOutageSeconds / 60)} min)`,
        `  showing content ${pct(total.displayAvailability)} of the scheduled hours`,
      )
      if (worst.length && plan.groupBy !== 'group') summary.push(`Lowest: ${worst.map((w) => `${w.name} ${pct(w.availability)}`).join(', ')}`)
    } else {
      name = 'proof-of-play'
      const by = (params.groupBy as (typeof PROOF_GROUP_BY)[number] | undefined) ?? 'content'
      const q = { from, to, nodeId: params.nodeId, groupId: params.groupId, contentKind: params.contentKind, contentId: params.contentId }
      for await (const chunk of this.playLog.summaryCsv(p, q, by)) csv += chunk
      const days = await this.playLog.summaryBy(p, q, 'day')
      let plays = 0
      let seconds = 0
      let on = 0
      for (const d of days) {
        plays += d.plays
        seconds += d.seconds
        on += d.secondsPanelOn
      }
      summary.push(
        `Proof of play, ${period}:`,
        `  ${plays} play${plays === 1 ? '' : 's'}, ${(seconds / 3600).toFixed(1)} h played, ${(on / 3600).toFixed(1)} h with the panel on`,
      )
    }
    summary.push('', `The rows are in the attached CSV. Subscription ${r.id} (${r.cadence}).`)
    const filename = `${name}-${from.slice(0, 10)}.csv`
    await this.mailer.send({
      workspaceId: r.workspace_id,
      to: JSON.parse(r.recipients) as string[],
      subject: `${name === 'availability' ? 'Availability' : 'Proof of play'} report, ${period}`,
      text: `${summary.join('\n')}\n`,
      attachments: [{ filename, contentType: 'text/csv', content: csv }],
    })
  }
}

/** Runs the due subscriptions on an interval, on one instance (its work lease). */
export class ReportSubscriptionWorker extends IntervalWorker {
  constructor(
    private readonly subscriptions: ReportSubscriptions,
    intervalMs: number,
    log: { error(obj: unknown, msg: string): void },
  ) {
    super(intervalMs, log)
  }

  protected async tick(): Promise<void> {
    await this.subscriptions.runDue()
  }
}
