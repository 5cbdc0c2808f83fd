// Rollouts: moving screens to an agent version in stages. A rollout targets the screens the
// caller reaches (all of them, a location and everything under it, or named screens), fixed
// when it is created, in an order of their own (a hash of the rollout and screen ids, so
// stages mix locations). `stages` are cumulative percentages ending at 100 (default 5, 25,
// 100): stage k holds the first ceil(N × stages[k] / 100) screens, at least one more than
// the stage before while any are left.
//
// A stage begins by queuing one `update` job per screen (the release of its architecture,
// which it reports; a screen already on the version counts updated at once). Each screen
// then ends `updated` (its new agent connected and reported: the job's ok result),
// `rolled_back` (the new agent did not come back and the player returned to the previous
// one by itself), or `failed` (the agent refused the release, or no result within the
// stage's `stageMinutes`). The rollout stops by itself (`stopped`) as soon as the failed
// and rolled-back screens of a stage are more than `abortIf.unhealthyPercent` of it; a stage
// whose screens all ended, and that has lasted `stageMinutes`, gives way to the next, and
// the last one to `completed`. `pause` holds it (jobs already queued still go out; no stage
// ends or begins), `resume` goes on (the stage's minutes count again from then), `abort`
// ends it and cancels the jobs not yet sent. One open (running or paused) rollout per
// workspace. The worker judges running rollouts every few seconds; a job result judges its
// rollout at once.
//
// Going back is explicit: a rollout to an older version than a targeted screen runs is
// refused unless it says allowDowngrade (stored and shown), and a screen found newer when
// its stage begins fails. A pinned credential sees and acts on the rollouts whose screens
// are all within its location (judged now, by the screens' homes); the others are 404.
import { createHash } from 'node:crypto'
import semver from 'semver'
import { Type, type Static } from '@sinclair/typebox'
import { AGENT_VERSION_PATTERN, type JobResult, type UpdateJob } from '@svc/shared/mqtt/index'
import type { Clock, IdGenerator } from '../../platform/clock.js'
import { type Hook, Listeners } from '../../platform/hooks.js'
import { Nullable, StringEnum, Timestamp } from '../../platform/contract.js'
import type { Database } from '../../platform/db/Database.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import { actorRef, type Principal } from '../../platform/http/Principal.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import type { NodeService } from '../nodes/index.js'
import { resolveTargets, type GroupConditions, type ScreenRecords, type ScopeKind } from '../screens/index.js'
import type { AgentReleaseService } from './AgentReleaseService.js'
import {
  AgentRolloutRepository,
  type AgentRolloutRow,
  byScreenId,
  FINAL_SCREEN_STATES,
  type PendingUpdate,
  type RolloutScreenRow,
  type RolloutScreenState,
  SCREEN_STATES,
} from './AgentRolloutRepository.js'

export { SCREEN_STATES }

export const ROLLOUT_STATES = ['running', 'paused', 'completed', 'stopped', 'aborted'] as const
export type RolloutState = (typeof ROLLOUT_STATES)[number]
export const DEFAULT_STAGES = [5, 25, 100] as const
export const DEFAULT_STAGE_MINUTES = 30
export const DEFAULT_UNHEALTHY_PERCENT = 10
export const MAX_STAGES = 10
/** Screens one rollout may take. */
export const MAX_ROLLOUT_SCREENS = 100_000
const REASON_CHARS = 500

export const RolloutInput = Type.Object(
  {
    version: Type.String({ minLength: 1, maxLength: 64, pattern: AGENT_VERSION_PATTERN, description: 'A version with at least one uploaded release.' }),
    nodeId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The screens of this location and every location under it.' })),
    screenIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 1000, description: 'These screens.' })),
    groupId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: "A group's members, resolved when the rollout starts (shown as its screenIds)." }),
    ),
    stages: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), {
        minItems: 1,
        maxItems: MAX_STAGES,
        description: `Cumulative percentages of the screens, rising, the last 100 (default ${DEFAULT_STAGES.join(', ')}).`,
      }),
    ),
    stageMinutes: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 7 * 24 * 60,
        description: `How long a stage lasts at least, and how long its screens have to come back on the new version (default ${DEFAULT_STAGE_MINUTES}).`,
      }),
    ),
    abortIf: Type.Optional(
      Type.Object(
        {
          unhealthyPercent: Type.Optional(
            Type.Integer({
              minimum: 0,
              maximum: 100,
              description: `The rollout stops by itself when more than this percentage of a stage's screens failed or rolled back (default ${DEFAULT_UNHEALTHY_PERCENT}).`,
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    allowDowngrade: Type.Optional(
      Type.Boolean({
        description:
          'Let the rollout move screens to an older version than they run (default false: a rollout whose version is older than a targeted screen runs is refused with 422, and a screen found newer when its stage begins fails). Recorded and shown on the rollout.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type RolloutInputBody = Static<typeof RolloutInput>

const Counts = {
  screens: Type.Integer(),
  waiting: Type.Integer({ description: 'Not reached yet (a later stage).' }),
  pending: Type.Integer({ description: 'Job queued, not yet received by the screen (offline?).' }),
  sent: Type.Integer({ description: 'The screen has the job: downloading, installing, or on trial.' }),
  updated: Type.Integer({ description: 'The new version connected and reported.' }),
  healthy: Type.Integer({ description: 'Updated, online and reporting the version now.' }),
  failed: Type.Integer({ description: 'The agent refused the release (signature, download, architecture) or did not answer within the stage.' }),
  rolledBack: Type.Integer({ description: 'The new version did not come back and the player returned to the previous one by itself.' }),
  cancelled: Type.Integer({ description: 'Jobs not sent before the rollout was aborted or stopped.' }),
}
const StageView = Type.Object({ percent: Type.Integer(), ...Counts })
const RolloutCounts = Type.Object(Counts)

export const AgentRollout = Type.Object({
  id: Type.String({ description: 'Prefix `arol_`.' }),
  version: Type.String(),
  nodeId: Nullable(Type.String()),
  screenIds: Nullable(Type.Array(Type.String())),
  stages: Type.Array(Type.Integer()),
  stageMinutes: Type.Integer(),
  abortIf: Type.Object({ unhealthyPercent: Type.Integer() }),
  allowDowngrade: Type.Boolean({ description: 'Whether the rollout may move screens to an older version than they run (set when it was created).' }),
  state: StringEnum(ROLLOUT_STATES, {
    description: '`running`, `paused`, `completed`, `stopped` (by its abort threshold: see reason) or `aborted` (by a person).',
  }),
  stage: Type.Integer({ description: 'Index in `stages` of the stage under way (or the last one reached).' }),
  stageStartedAt: Timestamp,
  reason: Nullable(Type.String()),
  counts: RolloutCounts,
  stageCounts: Type.Array(StageView),
  createdAt: Timestamp,
  createdBy: Nullable(Type.String()),
  updatedAt: Timestamp,
  finishedAt: Nullable(Timestamp),
})
export type AgentRolloutView = Static<typeof AgentRollout>

export const RolloutScreen = Type.Object({
  screenId: Type.String(),
  stage: Type.Integer(),
  state: StringEnum(SCREEN_STATES),
  reason: Nullable(Type.String()),
  releaseId: Nullable(Type.String()),
  queuedAt: Nullable(Timestamp),
  sentAt: Nullable(Timestamp),
  resultAt: Nullable(Timestamp),
})
export type RolloutScreenView = Static<typeof RolloutScreen>

const screenView = (r: RolloutScreenRow): RolloutScreenView => ({
  screenId: r.screen_id,
  stage: Number(r.stage),
  state: r.state as RolloutScreenState,
  reason: r.reason,
  releaseId: r.release_id,
  queuedAt: r.queued_at,
  sentAt: r.sent_at,
  resultAt: r.result_at,
})

type CountsView = Static<typeof RolloutCounts>
const zero = (): CountsView => ({ screens: 0, waiting: 0, pending: 0, sent: 0, updated: 0, healthy: 0, failed: 0, rolledBack: 0, cancelled: 0 })
const COUNT_FIELD: Record<RolloutScreenState, keyof CountsView> = {
  waiting: 'waiting',
  pending: 'pending',
  sent: 'sent',
  updated: 'updated',
  failed: 'failed',
  rolled_back: 'rolledBack',
  cancelled: 'cancelled',
}

/** Cumulative screen counts per stage for `n` screens: rising by at least one while screens are left, the last n. */
export function stageSizes(stages: readonly number[], n: number): number[] {
  const out: number[] = []
  let before = 0
  for (const [i, pct] of stages.entries()) {
    const c = i === stages.length - 1 ? n : Math.min(n, Math.max(before + 1, Math.ceil((n * pct) / 100)))
    out.push(c)
    before = c
  }
  return out
}

/**
 * Whether moving an agent on `current` to `target` goes back: `target` is an older semantic
 * version than `current`. Versions that are not both semantic versions cannot be ordered:
 * any move between two different ones counts as going back (allowDowngrade lets it).
 */
export function downgrades(current: string | null, target: string): boolean {
  if (current === null || current === target) return false
  const a = semver.valid(current)
  const b = semver.valid(target)
  if (a === null || b === null) return true
  return semver.lt(b, a)
}

export class AgentRolloutService {
  private readonly repo: AgentRolloutRepository
  private readonly queuedJobs = new Listeners<(screenId: string) => void>()
  /** Jobs were queued for a screen (after they committed): its delivery (devicelink's JobDelivery) joins this when it is built. */
  readonly queued: Hook<(screenId: string) => void> = this.queuedJobs

  private tellQueued(screenId: string): void {
    for (const l of this.queuedJobs.all()) l(screenId)
  }

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly screens: ScreenRecords,
    private readonly releases: AgentReleaseService,
    /** Base URL put in front of the download path (SVC_PUBLIC_URL); null = a path the agent resolves against its cloud. */
    private readonly publicUrl: string | null = null,
    /** How a `groupId` target selects its screens. */
    private readonly groups: GroupConditions | undefined = undefined,
  ) {
    this.repo = new AgentRolloutRepository(db.kysely)
  }

  private now(): string {
    return this.clock.now().toISOString()
  }

  async create(p: Principal, input: RolloutInputBody): Promise<AgentRolloutView> {
    if ([input.nodeId, input.screenIds, input.groupId].filter((v) => v !== undefined).length > 1)
      throw validation('Give one of nodeId, screenIds or groupId, not both (none: every screen you reach).')
    const stages = input.stages ?? [...DEFAULT_STAGES]
    for (let i = 1; i < stages.length; i++) if (stages[i]! <= stages[i - 1]!) throw validation('stages must rise (cumulative percentages, e.g. [5, 25, 100]).')
    if (stages[stages.length - 1] !== 100) throw validation('stages must end at 100 (every screen).')
    const releases = await this.releases.ofVersion(p.workspaceId, input.version)
    if (!releases.length) throw validation(`version: no release of ${input.version} is uploaded (POST /v1/agent-releases).`)
    const open = await this.repo.open(p.workspaceId)
    if (open) {
      // A pinned caller is not told about a rollout reaching outside its location.
      if (!(await this.repo.get(p.workspaceId, open.id, await this.nodes.scopeIds(p))))
        throw new ApiError('conflict', 'Another agent rollout of this workspace is running or paused; one runs at a time.')
      throw new ApiError('conflict', `Rollout ${open.id} (to ${open.version}) is ${open.state}; abort it or let it finish before starting another.`)
    }
    const scopeKind: ScopeKind = input.screenIds ? 'screens' : input.nodeId ? 'node' : input.groupId ? 'group' : 'all'
    const t = await resolveTargets(
      this.nodes,
      this.screens,
      p,
      {
        scopeKind,
        ...(input.screenIds ? { screenIds: input.screenIds } : {}),
        ...(input.nodeId ? { scopeNodeId: input.nodeId } : {}),
        ...(input.groupId ? { groupId: input.groupId } : {}),
      },
      { max: MAX_ROLLOUT_SCREENS, nodeField: 'nodeId', allowEmpty: true, groups: this.groups },
    )
    if (t.missing.length) throw validation(`screenIds: no such screen: ${t.missing.slice(0, 10).join(', ')}${t.missing.length > 10 ? ' …' : ''}.`)
    if (!t.screens.length) throw new ApiError('no_screens', 'The target matched no screen this credential reaches.')
    if (!input.allowDowngrade) {
      const newer = (
        await this.screens.agentsOf(
          p.workspaceId,
          t.screens.map((s) => s.id),
        )
      ).filter((a) => downgrades(a.agent_version, input.version))
      if (newer.length)
        throw validation(
          `version: ${input.version} is older than the agent ${newer.length} of the targeted screens run (${newer
            .slice(0, 5)
            .map((a) => `${a.id} on ${a.agent_version}`)
            .join(', ')}${newer.length > 5 ? ', …' : ''}); send allowDowngrade: true to move screens back to an older version.`,
        )
    }
    const id = this.ids.next('agentRollout')
    const now = this.now()
    const order = t.screens
      .map((s) => ({ id: s.id, key: createHash('sha256').update(`${id}/${s.id}`).digest('hex') }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    const sizes = stageSizes(stages, order.length)
    const members: RolloutScreenRow[] = order.map((s, position) => ({
      rollout_id: id,
      screen_id: s.id,
      workspace_id: p.workspaceId,
      position,
      stage: sizes.findIndex((c) => position < c),
      job_id: this.ids.next('agentUpdate'),
      release_id: null,
      state: 'waiting',
      reason: null,
      queued_at: null,
      sent_at: null,
      result_at: null,
    }))
    const row: AgentRolloutRow = {
      id,
      workspace_id: p.workspaceId,
      version: input.version,
      node_id: scopeKind === 'node' ? t.scopeNodeId : null,
      screen_ids: input.screenIds ? JSON.stringify([...new Set(input.screenIds)]) : scopeKind === 'group' ? JSON.stringify(t.screens.map((s) => s.id)) : null,
      stages: JSON.stringify(stages),
      stage_minutes: input.stageMinutes ?? DEFAULT_STAGE_MINUTES,
      unhealthy_percent: input.abortIf?.unhealthyPercent ?? DEFAULT_UNHEALTHY_PERCENT,
      allow_downgrade: input.allowDowngrade ? 1 : 0,
      state: 'running',
      stage: 0,
      stage_started_at: now,
      reason: null,
      created_at: now,
      created_by: actorRef(p),
      updated_at: now,
      finished_at: null,
    }
    await this.repo.insert(row, members)
    await this.beginStage(row, 0)
    await this.evaluate(id)
    return this.get(p, id)
  }

  /** The rollout, when every screen it reaches is within the credential's location (404 otherwise, as for another workspace's). */
  private async row(p: Principal, id: string): Promise<AgentRolloutRow> {
    const r = await this.repo.get(p.workspaceId, id, await this.nodes.scopeIds(p))
    if (!r) throw notFound('No such agent rollout.')
    return r
  }

  private async view(r: AgentRolloutRow): Promise<AgentRolloutView> {
    const stages = JSON.parse(r.stages) as number[]
    const perStage = stages.map((percent) => ({ percent, ...zero() }))
    const all = zero()
    for (const c of await this.repo.counts(r.id)) {
      const s = perStage[c.stage]
      if (!s) continue
      s[COUNT_FIELD[c.state]] += c.n
      s.screens += c.n
      all[COUNT_FIELD[c.state]] += c.n
      all.screens += c.n
    }
    for (const [stage, n] of await this.repo.healthy(r.id, r.version)) {
      const s = perStage[stage]
      if (s) s.healthy = n
      all.healthy += n
    }
    return {
      id: r.id,
      version: r.version,
      nodeId: r.node_id,
      screenIds: r.screen_ids ? (JSON.parse(r.screen_ids) as string[]) : null,
      stages,
      stageMinutes: Number(r.stage_minutes),
      abortIf: { unhealthyPercent: Number(r.unhealthy_percent) },
      allowDowngrade: Number(r.allow_downgrade) === 1,
      state: r.state as RolloutState,
      stage: Number(r.stage),
      stageStartedAt: r.stage_started_at,
      reason: r.reason,
      counts: all,
      stageCounts: perStage,
      createdAt: r.created_at,
      createdBy: r.created_by,
      updatedAt: r.updated_at,
      finishedAt: r.finished_at,
    }
  }

  async get(p: Principal, id: string): Promise<AgentRolloutView> {
    return this.view(await this.row(p, id))
  }

  async list(p: Principal, page: PageRequest, state?: string): Promise<Page<AgentRolloutView>> {
    const scopeIds = await this.nodes.scopeIds(p)
    const total = page.count ? await this.repo.count(p.workspaceId, state, scopeIds) : undefined
    const rows = await this.repo.list(p.workspaceId, page, state, scopeIds)
    const views = new Map<string, AgentRolloutView>()
    for (const r of rows.slice(0, page.limit ?? rows.length)) views.set(r.id, await this.view(r))
    return pageOf(rows, page, (r) => views.get(r.id)!, total)
  }

  /** A page of the rollout's screens with their state, by screen id. */
  async screensOf(p: Principal, id: string, page: PageRequest, state?: string): Promise<Page<RolloutScreenView>> {
    const r = await this.row(p, id)
    const total = page.count ? await this.repo.countScreens(r.id, state) : undefined
    return pageOf(byScreenId(await this.repo.screens(r.id, page, state)), page, screenView, total)
  }

  async pause(p: Principal, id: string): Promise<AgentRolloutView> {
    const r = await this.row(p, id)
    if (r.state !== 'running') throw new ApiError('conflict', `The rollout is ${r.state}; only a running one can be paused.`)
    await this.repo.transition(id, { state: 'running' }, { state: 'paused', updated_at: this.now() })
    return this.get(p, id)
  }

  async resume(p: Principal, id: string): Promise<AgentRolloutView> {
    const r = await this.row(p, id)
    if (r.state !== 'paused') throw new ApiError('conflict', `The rollout is ${r.state}; only a paused one can be resumed.`)
    const now = this.now()
    // The stage's minutes count again from now: its screens were not judged while it was held.
    await this.repo.transition(id, { state: 'paused' }, { state: 'running', stage_started_at: now, updated_at: now })
    for (const s of await this.repo.ofStage(id, Number(r.stage))) if (s.state === 'pending') this.tellQueued(s.screen_id)
    await this.evaluate(id)
    return this.get(p, id)
  }

  async abort(p: Principal, id: string): Promise<AgentRolloutView> {
    const r = await this.row(p, id)
    if (r.state !== 'running' && r.state !== 'paused') throw new ApiError('conflict', `The rollout is already ${r.state}.`)
    const now = this.now()
    if (await this.repo.transition(id, { state: r.state }, { state: 'aborted', reason: `aborted by ${actorRef(p)}`, updated_at: now, finished_at: now }))
      await this.repo.setAll(id, ['waiting', 'pending'], { state: 'cancelled', reason: 'the rollout was aborted', result_at: now })
    return this.get(p, id)
  }

  /** Begins stage `k`: its screens get their release's job, or their outcome at once. */
  private async beginStage(r: AgentRolloutRow, k: number): Promise<void> {
    const members = (await this.repo.ofStage(r.id, k)).filter((m) => m.state === 'waiting')
    if (!members.length) return
    const releases = new Map((await this.releases.ofVersion(r.workspace_id, r.version)).map((rel) => [rel.arch, rel.id]))
    const agents = new Map(
      (
        await this.screens.agentsOf(
          r.workspace_id,
          members.map((m) => m.screen_id),
        )
      ).map((a) => [a.id, a]),
    )
    const now = this.now()
    const queued: string[] = []
    for (const m of members) {
      const a = agents.get(m.screen_id)
      let arch: string | null = null
      try {
        arch = a?.reported ? ((JSON.parse(a.reported) as { agentArch?: string }).agentArch ?? null) : null
      } catch {
        arch = null
      }
      const release = arch ? releases.get(arch) : undefined
      if (!a) {
        await this.repo.setScreen(r.id, m.screen_id, ['waiting'], { state: 'cancelled', reason: 'the screen was deleted', result_at: now })
      } else if (a.agent_version === r.version) {
        await this.repo.setScreen(r.id, m.screen_id, ['waiting'], { state: 'updated', reason: `already on ${r.version}`, result_at: now })
      } else if (!Number(r.allow_downgrade) && downgrades(a.agent_version, r.version)) {
        await this.repo.setScreen(r.id, m.screen_id, ['waiting'], {
          state: 'failed',
          reason: `the screen runs ${a.agent_version}, newer than ${r.version}, and the rollout does not allow downgrades`,
          result_at: now,
        })
      } else if (!arch) {
        await this.repo.setScreen(r.id, m.screen_id, ['waiting'], {
          state: 'failed',
          reason: 'the screen has not reported its architecture (its agent predates updates, or never reported): update it by hand',
          result_at: now,
        })
      } else if (!release) {
        await this.repo.setScreen(r.id, m.screen_id, ['waiting'], { state: 'failed', reason: `no release of ${r.version} for ${arch}`, result_at: now })
      } else if (await this.repo.setScreen(r.id, m.screen_id, ['waiting'], { state: 'pending', release_id: release, queued_at: now })) {
        queued.push(m.screen_id)
      }
    }
    for (const id of queued) this.tellQueued(id)
  }

  /** Judges every running rollout (the worker). */
  async tickAll(): Promise<void> {
    for (const id of await this.repo.running()) await this.evaluate(id)
  }

  /**
   * Judges one running rollout: screens past the stage's minutes fail, the abort threshold
   * stops it, an ended stage gives way to the next (or completes the rollout).
   */
  async evaluate(id: string): Promise<void> {
    for (;;) {
      const r = await this.repo.byId(id)
      if (r?.state !== 'running') return
      const k = Number(r.stage)
      const stages = JSON.parse(r.stages) as number[]
      const now = this.clock.now()
      const at = now.toISOString()
      const minutes = Number(r.stage_minutes)
      const stageOver = now.getTime() >= Date.parse(r.stage_started_at) + minutes * 60_000
      if (stageOver)
        await this.repo.setAll(r.id, ['pending', 'sent'], { state: 'failed', reason: `no answer within the stage's ${minutes} minutes`, result_at: at }, k)
      const members = await this.repo.ofStage(r.id, k)
      const bad = members.filter((m) => m.state === 'failed' || m.state === 'rolled_back').length
      const limit = Number(r.unhealthy_percent)
      if (members.length && bad * 100 > limit * members.length) {
        const reason = `stage ${k + 1} (${stages[k]}%): ${bad} of ${members.length} screens failed or rolled back, more than ${limit}%`
        if (await this.repo.transition(r.id, { state: 'running', stage: k }, { state: 'stopped', reason, updated_at: at, finished_at: at }))
          await this.repo.setAll(r.id, ['waiting', 'pending'], { state: 'cancelled', reason: 'the rollout stopped', result_at: at })
        return
      }
      const ended = members.every((m) => FINAL_SCREEN_STATES.includes(m.state as RolloutScreenState))
      if (!ended || !stageOver) return
      if (k === stages.length - 1) {
        await this.repo.transition(r.id, { state: 'running', stage: k }, { state: 'completed', updated_at: at, finished_at: at })
        return
      }
      if (!(await this.repo.transition(r.id, { state: 'running', stage: k }, { stage: k + 1, stage_started_at: at, updated_at: at }))) return
      await this.beginStage({ ...r, stage: k + 1, stage_started_at: at }, k + 1)
      // A stage without screens (fewer screens than stages) ends at once: judge again.
    }
  }

  // --- the job source of update jobs (UpdateJobDelivery) ---

  private job(m: PendingUpdate): UpdateJob {
    const base = this.publicUrl ? this.publicUrl.replace(/\/+$/, '') : ''
    return {
      id: m.job_id,
      kind: 'update',
      version: m.version,
      arch: m.arch as UpdateJob['arch'],
      url: `${base}/v1/devices/agent-releases/${m.release_id}/tarball`,
      sha256: m.sha256,
      size: Number(m.size_bytes),
      signature: m.signature,
      createdAt: m.queued_at ?? this.now(),
    }
  }

  /** Update jobs of the screen not yet sent (one per rollout reaching it), as MQTT job messages. */
  async pendingFor(screenId: string): Promise<UpdateJob[]> {
    return (await this.pendingForMany([screenId])).get(screenId) ?? []
  }

  async pendingForMany(screenIds: readonly string[]): Promise<Map<string, UpdateJob[]>> {
    const out = new Map<string, UpdateJob[]>()
    if (!screenIds.length) return out
    for (let i = 0; i < screenIds.length; i += 500) {
      for (const m of await this.repo.pendingFor(screenIds.slice(i, i + 500))) {
        const list = out.get(m.screen_id) ?? []
        list.push(this.job(m))
        out.set(m.screen_id, list)
      }
    }
    return out
  }

  screensWithPending(): Promise<string[]> {
    return this.repo.screensWithPending()
  }

  /** The device acknowledged the job: it is not sent again (a player that went back must not install it again). */
  async markSent(jobId: string): Promise<void> {
    const m = await this.repo.byJob(jobId)
    if (m) await this.repo.setScreen(m.rollout_id, m.screen_id, ['pending'], { state: 'sent', sent_at: this.now() })
  }

  /** An `update` job's result from the screen it was sent to. */
  async applyResult(screenId: string, result: JobResult): Promise<void> {
    const m = await this.repo.byJob(result.jobId)
    if (!m || m.screen_id !== screenId) return
    const at = this.now()
    const reason = (result.reason ?? '').slice(0, REASON_CHARS) || null
    const patch =
      result.outcome === 'ok'
        ? { state: 'updated' as const, reason: null, result_at: at }
        : { state: result.rolledBack ? ('rolled_back' as const) : ('failed' as const), reason: reason ?? `update ${result.outcome}`, result_at: at }
    // A result may overtake the acknowledgement, and the stage's end may have judged the screen failed before a late answer.
    if (await this.repo.setScreen(m.rollout_id, screenId, ['pending', 'sent', 'failed'], patch)) await this.evaluate(m.rollout_id)
  }

  /** The agent version each screen's latest rollout moves it to (drift). */
  targetVersions(screenIds: readonly string[]): Promise<Map<string, string>> {
    return this.repo.targetVersions(screenIds)
  }
}
