// The only code that reads or writes `agent_rollouts` and `agent_rollout_screens`: moves of
// screens to an agent version in stages, and per screen its stage and its update job.
import type { Expression, ExpressionBuilder, Selectable, SqlBool } from 'kysely'
import type { Executor } from '../../platform/db/Database.js'
import type { DB } from '../../platform/db/schema.js'
import type { AgentRolloutScreensTable, AgentRolloutsTable } from './tables.js'
import { paged } from '../../platform/db/keyset.js'
import type { PageRequest } from '../../platform/paging.js'

export type AgentRolloutRow = Selectable<AgentRolloutsTable>
export type RolloutScreenRow = Selectable<AgentRolloutScreensTable>

/** A rollout's screen states, in the order the rollout takes them. */
export const SCREEN_STATES = ['waiting', 'pending', 'sent', 'updated', 'failed', 'rolled_back', 'cancelled'] as const
export type RolloutScreenState = (typeof SCREEN_STATES)[number]
/** States a screen of a begun stage ends in. */
export const FINAL_SCREEN_STATES: readonly RolloutScreenState[] = ['updated', 'failed', 'rolled_back', 'cancelled']
/** Rollouts that still send jobs or may again. */
export const OPEN_ROLLOUT_STATES = ['running', 'paused'] as const

/** An update job to send: the screen's row and the release it carries. */
export interface PendingUpdate {
  screen_id: string
  job_id: string
  release_id: string | null
  queued_at: string | null
  version: string
  arch: string
  sha256: string
  size_bytes: number
  signature: string
}

export interface StageCount {
  stage: number
  state: RolloutScreenState
  n: number
}

export class AgentRolloutRepository {
  constructor(private readonly k: Executor) {}

  async insert(row: AgentRolloutRow, screens: readonly RolloutScreenRow[]): Promise<void> {
    await this.k.insertInto('agent_rollouts').values(row).execute()
    for (let i = 0; i < screens.length; i += 500)
      await this.k
        .insertInto('agent_rollout_screens')
        .values(screens.slice(i, i + 500))
        .execute()
  }

  /** The rollout, when `scopeIds` (a pinned credential's nodes; null = every node) holds every screen it reaches. */
  get(workspaceId: string, id: string, scopeIds: readonly string[] | null = null): Promise<AgentRolloutRow | undefined> {
    return this.k
      .selectFrom('agent_rollouts')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where((eb) => this.within(eb, scopeIds))
      .executeTakeFirst()
  }

  /**
   * The condition "no screen of the rollout is outside `scopeIds`" (null = no condition):
   * a screen at the root, or at a node not listed, is outside. A screen since deleted
   * reaches nothing.
   */
  private within(eb: ExpressionBuilder<DB, 'agent_rollouts'>, scopeIds: readonly string[] | null): Expression<SqlBool> {
    if (scopeIds === null) return eb.lit(true)
    let outside = eb
      .selectFrom('agent_rollout_screens as m')
      .innerJoin('screens as s', 's.id', 'm.screen_id')
      .select('m.screen_id')
      .whereRef('m.rollout_id', '=', 'agent_rollouts.id')
    if (scopeIds.length) outside = outside.where((w) => w.or([w('s.node_id', 'is', null), w('s.node_id', 'not in', [...scopeIds])]))
    return eb.not(eb.exists(outside))
  }

  byId(id: string): Promise<AgentRolloutRow | undefined> {
    return this.k.selectFrom('agent_rollouts').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** Newest first. */
  list(workspaceId: string, page: PageRequest, state?: string, scopeIds: readonly string[] | null = null): Promise<AgentRolloutRow[]> {
    let q = this.k
      .selectFrom('agent_rollouts')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where((eb) => this.within(eb, scopeIds))
    if (state !== undefined) q = q.where('state', '=', state)
    return paged(q, page, 'desc').execute()
  }

  async count(workspaceId: string, state?: string, scopeIds: readonly string[] | null = null): Promise<number> {
    let q = this.k
      .selectFrom('agent_rollouts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where((eb) => this.within(eb, scopeIds))
    if (state !== undefined) q = q.where('state', '=', state)
    return Number((await q.executeTakeFirstOrThrow()).n)
  }

  /** The workspace's running or paused rollout, if any. */
  open(workspaceId: string): Promise<AgentRolloutRow | undefined> {
    return this.k
      .selectFrom('agent_rollouts')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('state', 'in', [...OPEN_ROLLOUT_STATES])
      .executeTakeFirst()
  }

  /** Ids of running rollouts in every workspace (the worker's sweep). */
  async running(): Promise<string[]> {
    return (await this.k.selectFrom('agent_rollouts').select('id').where('state', '=', 'running').execute()).map((r) => r.id)
  }

  /** Whether an open rollout moves screens to `version` (a release of it may not be deleted). */
  async openWithVersion(workspaceId: string, version: string): Promise<string | null> {
    const r = await this.k
      .selectFrom('agent_rollouts')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('version', '=', version)
      .where('state', 'in', [...OPEN_ROLLOUT_STATES])
      .executeTakeFirst()
    return r?.id ?? null
  }

  /**
   * Changes the rollout only if it is still as `expect` says (state, and stage when given):
   * two instances judging the same rollout change it once. True when this call changed it.
   */
  async transition(id: string, expect: { state: string; stage?: number }, patch: Partial<AgentRolloutRow>): Promise<boolean> {
    let q = this.k.updateTable('agent_rollouts').set(patch).where('id', '=', id).where('state', '=', expect.state)
    if (expect.stage !== undefined) q = q.where('stage', '=', expect.stage)
    const r = await q.executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  /** Screens per stage and state. */
  async counts(rolloutId: string): Promise<StageCount[]> {
    const rows = await this.k
      .selectFrom('agent_rollout_screens')
      .select(['stage', 'state', (eb) => eb.fn.countAll<number>().as('n')])
      .where('rollout_id', '=', rolloutId)
      .groupBy(['stage', 'state'])
      .execute()
    return rows.map((r) => ({ stage: Number(r.stage), state: r.state as RolloutScreenState, n: Number(r.n) }))
  }

  /** Updated screens of the rollout per stage that report `version` and are online now (healthy). */
  async healthy(rolloutId: string, version: string): Promise<Map<number, number>> {
    const rows = await this.k
      .selectFrom('agent_rollout_screens as m')
      .innerJoin('screens as s', 's.id', 'm.screen_id')
      .select(['m.stage', (eb) => eb.fn.countAll<number>().as('n')])
      .where('m.rollout_id', '=', rolloutId)
      .where('m.state', '=', 'updated')
      .where('s.status', '=', 'online')
      .where('s.agent_version', '=', version)
      .groupBy('m.stage')
      .execute()
    return new Map(rows.map((r) => [Number(r.stage), Number(r.n)]))
  }

  /** The screens of one stage. */
  ofStage(rolloutId: string, stage: number): Promise<RolloutScreenRow[]> {
    return this.k.selectFrom('agent_rollout_screens').selectAll().where('rollout_id', '=', rolloutId).where('stage', '=', stage).orderBy('position').execute()
  }

  /** A page of the rollout's screens, by screen id. */
  screens(rolloutId: string, page: PageRequest, state?: string): Promise<RolloutScreenRow[]> {
    let q = this.k.selectFrom('agent_rollout_screens').selectAll().where('rollout_id', '=', rolloutId)
    if (state !== undefined) q = q.where('state', '=', state)
    if (page.after) q = q.where('screen_id', '>', page.after)
    q = q.orderBy('screen_id')
    if (page.limit !== null) q = q.limit(page.limit + 1)
    return q.execute()
  }

  async countScreens(rolloutId: string, state?: string): Promise<number> {
    let q = this.k
      .selectFrom('agent_rollout_screens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('rollout_id', '=', rolloutId)
    if (state !== undefined) q = q.where('state', '=', state)
    return Number((await q.executeTakeFirstOrThrow()).n)
  }

  /** Whether a rollout sent (or is sending) `releaseId` to the screen. */
  async wasSent(screenId: string, releaseId: string): Promise<boolean> {
    const r = await this.k
      .selectFrom('agent_rollout_screens')
      .select('job_id')
      .where('screen_id', '=', screenId)
      .where('release_id', '=', releaseId)
      .executeTakeFirst()
    return r !== undefined
  }

  byJob(jobId: string): Promise<RolloutScreenRow | undefined> {
    return this.k.selectFrom('agent_rollout_screens').selectAll().where('job_id', '=', jobId).executeTakeFirst()
  }

  /** Moves one screen from one of `from` to a new state; false when it was no longer in them. */
  async setScreen(
    rolloutId: string,
    screenId: string,
    from: readonly RolloutScreenState[],
    patch: Partial<Pick<RolloutScreenRow, 'state' | 'reason' | 'release_id' | 'queued_at' | 'sent_at' | 'result_at'>>,
  ): Promise<boolean> {
    const r = await this.k
      .updateTable('agent_rollout_screens')
      .set(patch)
      .where('rollout_id', '=', rolloutId)
      .where('screen_id', '=', screenId)
      .where('state', 'in', [...from])
      .executeTakeFirst()
    return Number(r.numUpdatedRows) > 0
  }

  /** Every screen of the rollout in one of `from` goes to `state` (with a reason); answers how many. */
  async setAll(
    rolloutId: string,
    from: readonly RolloutScreenState[],
    patch: Pick<RolloutScreenRow, 'state' | 'reason' | 'result_at'>,
    stage?: number,
  ): Promise<number> {
    let q = this.k
      .updateTable('agent_rollout_screens')
      .set(patch)
      .where('rollout_id', '=', rolloutId)
      .where('state', 'in', [...from])
    if (stage !== undefined) q = q.where('stage', '=', stage)
    const r = await q.executeTakeFirst()
    return Number(r.numUpdatedRows)
  }

  /** The screens' update jobs not yet sent, of running rollouts, oldest first, with the release each sends. */
  pendingFor(screenIds: readonly string[]): Promise<PendingUpdate[]> {
    return this.k
      .selectFrom('agent_rollout_screens as m')
      .innerJoin('agent_rollouts as r', 'r.id', 'm.rollout_id')
      .innerJoin('agent_releases as rel', 'rel.id', 'm.release_id')
      .select(['m.screen_id', 'm.job_id', 'm.release_id', 'm.queued_at', 'r.version', 'rel.arch', 'rel.sha256', 'rel.size_bytes', 'rel.signature'])
      .where('m.screen_id', 'in', [...screenIds])
      .where('m.state', '=', 'pending')
      .where('r.state', '=', 'running')
      .orderBy('m.queued_at')
      .orderBy('m.job_id')
      .execute()
  }

  /** Screens with update jobs to send (delivery on start). */
  async screensWithPending(): Promise<string[]> {
    const rows = await this.k
      .selectFrom('agent_rollout_screens as m')
      .innerJoin('agent_rollouts as r', 'r.id', 'm.rollout_id')
      .select('m.screen_id')
      .distinct()
      .where('m.state', '=', 'pending')
      .where('r.state', '=', 'running')
      .execute()
    return rows.map((r) => r.screen_id)
  }

  /**
   * The version each screen's latest rollout moves it to: the newest rollout that reached
   * the screen (its stage began) and was not aborted.
   */
  async targetVersions(screenIds: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>()
    for (let i = 0; i < screenIds.length; i += 500) {
      const rows = await this.k
        .selectFrom('agent_rollout_screens as m')
        .innerJoin('agent_rollouts as r', 'r.id', 'm.rollout_id')
        .select(['m.screen_id', 'r.version', 'r.id'])
        .where('m.screen_id', 'in', screenIds.slice(i, i + 500))
        .where('m.state', 'not in', ['waiting', 'cancelled'])
        .where('r.state', '!=', 'aborted')
        .orderBy('r.id', 'desc')
        .execute()
      for (const r of rows) if (!out.has(r.screen_id)) out.set(r.screen_id, r.version)
    }
    return out
  }
}

/** A page of rows keyed by screen id, as pageOf wants them. */
export function byScreenId(rows: RolloutScreenRow[]): Array<RolloutScreenRow & { id: string }> {
  return rows.map((r) => ({ ...r, id: r.screen_id }))
}
