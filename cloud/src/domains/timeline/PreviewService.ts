// What a write would do to what screens play, before making it. The write itself runs as a
// dry run (platform/http/innerRequests.ts): its route checks the caller's permission, pins,
// tenancy and body exactly as for the real write, and its service answers a plan instead of
// writing. Here the plan is applied to each touched screen's desired state, in memory, and
// both states are walked with the player's decision over the window. Nothing is stored,
// published, announced, or counted against idempotency.
import { Type, type Static } from '@sinclair/typebox'
import type { ContentKind, DesiredState } from '@svc/shared/mqtt/index'
import type { Clock } from '../../platform/clock.js'
import { Nullable, Timestamp } from '../../platform/contract.js'
import { validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import { decodeCursor, encodeCursor } from '../../platform/paging.js'
import { DateTimeField, parseTimeRange } from '../../platform/timeRange.js'
import type { ContentPlan, ContentResolver } from '../content/index.js'
import type { DesiredStateBuilder } from '../devicelink/index.js'
import type { AssignmentService, AssignPlan, ScreenRecords } from '../screens/index.js'
import type { TakeoverPlan, TakeoverRecords } from '../takeovers/index.js'
import { TIMELINE_MAX_SEGMENTS, TimelineSegment, walkTimeline } from './TimelineService.js'

export const PREVIEW_DEFAULT_HOURS = 24
export const PREVIEW_MAX_DAYS = 7
export const PREVIEW_DEFAULT_LIMIT = 50
export const PREVIEW_MAX_LIMIT = 500
/**
 * Segments (before and after, over its screens) one page carries at most: a page stops
 * early, at the screen that reaches it, and nextCursor goes on from there.
 */
export const PREVIEW_MAX_PAGE_SEGMENTS = 20_000
const HOUR_MS = 3_600_000

/** The previewed cast's or emergency's id in `after` (it has none until it is made). */
export const PREVIEW_CAST_ID = 'cast_preview'
export const PREVIEW_EMERGENCY_ID = 'emg_preview'

/** The writes a preview takes, by method and path. */
export const PREVIEWABLE: readonly { method: string; path: RegExp; what: string }[] = [
  { method: 'POST', path: /^\/v1\/screens\/[^/]+\/assign$/, what: 'POST /v1/screens/<id>/assign' },
  { method: 'POST', path: /^\/v1\/screens\/bulk-assign$/, what: 'POST /v1/screens/bulk-assign' },
  { method: 'POST', path: /^\/v1\/schedules$/, what: 'POST /v1/schedules' },
  { method: 'PATCH', path: /^\/v1\/schedules\/[^/]+$/, what: 'PATCH /v1/schedules/<id>' },
  { method: 'POST', path: /^\/v1\/casts$/, what: 'POST /v1/casts' },
  { method: 'POST', path: /^\/v1\/emergencies$/, what: 'POST /v1/emergencies' },
]

export const PreviewBody = Type.Object(
  {
    request: Type.Object(
      {
        method: Type.String({ maxLength: 10, description: '`POST` or `PATCH`.' }),
        path: Type.String({ maxLength: 300, description: "The write's path, e.g. `/v1/screens/scr_…/assign`." }),
        body: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The JSON body the write would be sent.' })),
      },
      { additionalProperties: false },
    ),
    from: Type.Optional(DateTimeField('Window start, an ISO 8601 date-time with a zone (default: now).')),
    to: Type.Optional(DateTimeField(`Window end, exclusive (default: ${PREVIEW_DEFAULT_HOURS} h after from; at most ${PREVIEW_MAX_DAYS} days).`)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PREVIEW_MAX_LIMIT, description: `Screens per page (default ${PREVIEW_DEFAULT_LIMIT}).` })),
    cursor: Type.Optional(Type.String({ maxLength: 400, description: "The previous answer's nextCursor." })),
  },
  { additionalProperties: false },
)
export type PreviewBodyT = Static<typeof PreviewBody>

export const PreviewScreen = Type.Object({
  screenId: Type.String(),
  changed: Type.Boolean({ description: 'Whether anything in the window would play differently (or for a different reason).' }),
  truncated: Type.Boolean({
    description: `True when the window held more than ${TIMELINE_MAX_SEGMENTS.toLocaleString('en-US')} segments before or after, and the lists stop there (changed then compares what they hold).`,
  }),
  before: Type.Array(TimelineSegment),
  after: Type.Array(TimelineSegment),
})

export const PreviewAnswer = Type.Object({
  data: Type.Array(PreviewScreen, {
    description: `Up to \`limit\` screens, fewer when their segments reach ${PREVIEW_MAX_PAGE_SEGMENTS.toLocaleString('en-US')} (follow nextCursor).`,
  }),
  nextCursor: Nullable(Type.String()),
  from: Timestamp,
  to: Timestamp,
  held: Type.Boolean({ description: 'True when the write would wait for approval: then nothing changes until it is approved, and `after` equals `before`.' }),
  screenCount: Type.Integer({ description: 'Screens the write would touch, over all pages.' }),
})

type Plan = AssignPlan | TakeoverPlan | ContentPlan

const identities = new WeakMap<object, number>()
let lastIdentity = 0
/** A number per object (0 for none): the builder hands one batch's screens the same described content objects. */
function identity(o: object | null | undefined): number {
  if (!o) return 0
  let n = identities.get(o)
  if (n === undefined) identities.set(o, (n = ++lastIdentity))
  return n
}

/**
 * Equal for two desired states that decide alike (the same zone, assignment, schedule,
 * library, casts and emergency), from the described objects' identities: the builder shares
 * them across a batch, so this costs a few lookups, not a serialisation of each state. Equal
 * content in distinct objects only shares less.
 */
function sameStateKey(d: DesiredState): string {
  const a = d.assignment
  const parts: (string | number)[] = [d.timezone, a?.contentKind ?? '', a?.contentId ?? '', identity(a?.content), identity(d.schedule), identity(d.library)]
  for (const c of d.casts) parts.push(c.id, c.contentKind, c.contentId, identity(c.content), c.triggeredAt, c.expiresAt ?? '')
  const e = d.emergency
  if (e) parts.push(e.id, e.contentKind, e.contentId, identity(e.content), e.message ?? '')
  return parts.join('\u0000')
}

/** The screens a plan touches (a page of them at a time) and each one's desired state after it. */
interface Applied {
  held: boolean
  count(): Promise<number>
  page(after: string | null, limit: number): Promise<string[]>
  apply(before: DesiredState): Promise<DesiredState>
}

export class PreviewService {
  constructor(
    private readonly desired: Pick<DesiredStateBuilder, 'buildMany'>,
    private readonly screens: Pick<ScreenRecords, 'targetIds'>,
    private readonly assignments: Pick<AssignmentService, 'screensShowing'>,
    private readonly takeovers: Pick<TakeoverRecords, 'screensShowing'>,
    private readonly content: ContentResolver,
    private readonly clock: Clock,
  ) {}

  /** The method and path of a previewable write; 422 naming `request` for anything else. */
  check(body: PreviewBodyT): { method: string; path: string } {
    const method = body.request.method.toUpperCase()
    const path = body.request.path
    if (!PREVIEWABLE.some((w) => w.method === method && w.path.test(path)))
      throw validation(`request: only these writes can be previewed: ${PREVIEWABLE.map((w) => w.what).join(', ')}.`)
    return { method, path }
  }

  /** The window of a preview: default the next 24 hours, at most 7 days. */
  window(body: PreviewBodyT): { from: number; to: number } {
    const range = parseTimeRange(body)
    const from = range.from ? Date.parse(range.from) : this.clock.now().getTime()
    const to = range.to ? Date.parse(range.to) : from + PREVIEW_DEFAULT_HOURS * HOUR_MS
    if (to <= from) throw validation('to must be after from.')
    if (to - from > PREVIEW_MAX_DAYS * 24 * HOUR_MS) throw validation(`from and to are at most ${PREVIEW_MAX_DAYS} days apart.`)
    return { from, to }
  }

  /**
   * Every touched screen of the page, before and after the plan, over the window, as the
   * answer's JSON text (the route sends it as it is; PreviewAnswer documents it). Screens
   * told the same thing have the same timelines (a fleet shares a few schedules): each
   * distinct state is walked and serialised once per page, and its screens share the text.
   */
  async preview(p: Principal, plan: unknown, body: PreviewBodyT): Promise<string> {
    const { from, to } = this.window(body)
    const applied = this.applied(p.workspaceId, plan as Plan)
    const limit = body.limit ?? PREVIEW_DEFAULT_LIMIT
    const after = body.cursor !== undefined ? decodeCursor(body.cursor) : null
    const ids = await applied.page(after, limit + 1)
    let more = ids.length > limit
    const pageIds = more ? ids.slice(0, limit) : ids
    const states = await this.desired.buildMany(p.workspaceId, pageIds)
    /** Distinct state → `"changed":…,"truncated":…,"before":[…],"after":[…]` and its segment count. */
    const walked = new Map<string, { text: string; segments: number }>()
    const items: string[] = []
    let segments = 0
    let last: string | null = null
    for (const screenId of pageIds) {
      // The page is full: the next one starts after the last screen answered.
      if (segments >= PREVIEW_MAX_PAGE_SEGMENTS) {
        more = true
        break
      }
      last = screenId
      const state = states.get(screenId)
      if (!state) continue
      const key = sameStateKey(state)
      let one = walked.get(key)
      if (one === undefined) {
        const before = await walkTimeline(state, from, to)
        const afterWalk = applied.held ? before : await walkTimeline(await applied.apply(structuredClone(state)), from, to)
        const b = JSON.stringify(before.segments)
        const a = applied.held ? b : JSON.stringify(afterWalk.segments)
        one = {
          text: `"changed":${a !== b},"truncated":${before.truncated || afterWalk.truncated},"before":${b},"after":${a}`,
          segments: before.segments.length + afterWalk.segments.length,
        }
        walked.set(key, one)
      }
      segments += one.segments
      items.push(`{"screenId":${JSON.stringify(screenId)},${one.text}}`)
    }
    const tail = {
      nextCursor: more && last !== null ? encodeCursor(last) : null,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      held: applied.held,
      screenCount: await applied.count(),
    }
    return `{"data":[${items.join(',')}],${JSON.stringify(tail).slice(1)}`
  }

  private applied(workspaceId: string, plan: Plan): Applied {
    switch (plan.kind) {
      case 'assign':
        return this.assign(workspaceId, plan)
      case 'cast':
      case 'emergency':
        return this.takeover(workspaceId, plan)
      case 'content':
        return this.schedule(workspaceId, plan)
    }
  }

  private assign(workspaceId: string, plan: AssignPlan): Applied {
    const ids = [...plan.screenIds].sort()
    return {
      held: false,
      count: async () => ids.length,
      page: async (after, limit) => (after === null ? ids : ids.filter((id) => id > after)).slice(0, limit),
      apply: async (state) => {
        const next: DesiredState = { ...state, assignment: null, schedule: null }
        delete next.library
        if (plan.contentKind === null || plan.contentId === null) return next
        const ref = { kind: plan.contentKind as ContentKind, id: plan.contentId }
        const described = await this.content.describeForDevice(workspaceId, ref)
        next.assignment = { contentKind: ref.kind, contentId: ref.id, ...(described ? { content: described } : {}) }
        const s = ref.kind === 'schedule' ? await this.content.resolveSchedule?.(workspaceId, ref.id) : null
        if (s) {
          next.schedule = s.schedule
          next.library = s.library
        }
        return next
      },
    }
  }

  private takeover(workspaceId: string, plan: TakeoverPlan): Applied {
    const ref = { kind: plan.contentKind, id: plan.contentId }
    const at = this.clock.now().toISOString()
    const page = (after: string | null, limit: number) => {
      let q = this.screens.targetIds(workspaceId, plan.filter)
      if (after !== null) q = q.where('id', '>', after)
      return q
        .orderBy('id')
        .limit(limit)
        .execute()
        .then((rows) => rows.map((r) => r.id))
    }
    return {
      held: false,
      count: async () => plan.screenCount,
      page,
      apply: async (state) => {
        if (ref.kind === null || ref.id === null) {
          // An emergency without content (CAP feeds only): its message alone fills the screen.
          if (plan.kind !== 'emergency') return state
          const message = plan.message ? { message: plan.message } : {}
          const e = { id: PREVIEW_EMERGENCY_ID, contentKind: 'schedule' as const, contentId: PREVIEW_EMERGENCY_ID, ...message, startedAt: at }
          return { ...state, emergency: { ...e, presentation: 'banner' as const, messageOnly: 'fullscreen' as const } }
        }
        const described =
          (await this.content.describeForDevice(workspaceId, { kind: ref.kind, id: ref.id })) ?? (plan.contentName ? { name: plan.contentName } : null)
        const item = { contentKind: ref.kind, contentId: ref.id, ...(described ? { content: described } : {}) }
        if (plan.kind === 'emergency') {
          return { ...state, emergency: { id: PREVIEW_EMERGENCY_ID, ...item, ...(plan.message ? { message: plan.message } : {}), startedAt: at } }
        }
        // The newer cast takes its screens from older ones.
        return { ...state, casts: [{ id: PREVIEW_CAST_ID, ...item, triggeredAt: at, expiresAt: plan.expiresAt }] }
      },
    }
  }

  private schedule(workspaceId: string, plan: ContentPlan): Applied {
    const id = plan.contentId
    // A new item is on no screen; an item of another kind is not previewed (the routes take schedules only).
    if (id === null || plan.contentKind !== 'schedule') return { held: plan.held, count: async () => 0, page: async () => [], apply: async (s) => s }
    let touched: Promise<string[]> | null = null
    const all = () => {
      touched ??= Promise.all([this.assignments.screensShowing(workspaceId, id), this.takeovers.screensShowing(workspaceId, [id])]).then(([a, b]) =>
        [...new Set([...a, ...b])].sort(),
      )
      return touched
    }
    let resolved: ReturnType<NonNullable<ContentResolver['resolveScheduleWith']>> | null = null
    const next = () => {
      if (!this.content.resolveScheduleWith) throw validation('request: schedule changes cannot be previewed with this content library.')
      resolved ??= this.content.resolveScheduleWith(workspaceId, id, plan.body)
      return resolved
    }
    return {
      held: plan.held,
      count: async () => (await all()).length,
      page: async (after, limit) => (await all()).filter((s) => after === null || s > after).slice(0, limit),
      apply: async (state) => {
        const r = await next()
        const out: DesiredState = { ...state }
        if (state.assignment?.contentKind === 'schedule' && state.assignment.contentId === id) {
          if (r) Object.assign(out, { assignment: { ...state.assignment, content: r.content }, schedule: r.schedule, library: r.library })
          else {
            // A schedule that can no longer play is left out: the screen plays nothing.
            Object.assign(out, { assignment: null, schedule: null })
            delete out.library
          }
        }
        const shows = (t: { contentKind: string; contentId: string }) => t.contentKind === 'schedule' && t.contentId === id
        out.casts = state.casts.flatMap((c) => (!shows(c) ? [c] : r ? [{ ...c, content: r.content }] : []))
        if (state.emergency && shows(state.emergency)) out.emergency = r ? { ...state.emergency, content: r.content } : null
        return out
      },
    }
  }
}
