// Approvals: each location's policy, and the requests that hold changes to content homed
// where the effective policy is `required`. The content library asks `gate()` before a
// change and, when held, records the request with `open()` in the change's transaction.
// A held creation leaves the item in the library but unplayable (`unapproved()`); a held
// update leaves the item as it was and keeps the new version in the request until the
// last level approves it. Rejection or withdrawal discards the change (a held new item
// is deleted when nothing uses it, and otherwise stays unplayable).
import type { Clock, IdGenerator } from '../../platform/clock.js'
import type { Database, Executor, Queryable } from '../../platform/db/Database.js'
import { ApiError, notFound, validation } from '../../platform/errors.js'
import { actorRef, type Principal } from '../../platform/http/Principal.js'
import { holds } from '@svc/shared'
import { Listeners } from '../../platform/hooks.js'
import type { EventOutbox } from '../events/index.js'
import type { EventData } from '../events/index.js'
import { pageOf, type Page, type PageRequest } from '../../platform/paging.js'
import { ApprovalRepository, type ApprovalPolicyRow, type ApprovalRequestRow } from './ApprovalRepository.js'
import type { UserService } from '../access/index.js'
import type { NodeService } from '../nodes/index.js'

export interface ApprovalPolicy {
  required: boolean
  inheritFromParent: boolean
  escalateUpTiers: boolean
  allowSharedExemptions: boolean
  approvers: string[]
}

export interface PolicyView extends ApprovalPolicy {
  nodeId: string
  /** What applies at this location after inheritance, and the location it comes from. */
  effective: ApprovalPolicy & { sourceNodeId: string | null }
  updatedAt: string | null
}

export interface Level {
  nodeId: string
  nodeName: string
  approverIds: string[]
  approverNames: string[]
}

export interface Decision {
  level: number
  decidedById: string
  decidedByName: string | null
  decidedAt: string
  note: string | null
  /** approve, reject or withdraw. */
  action: string
}

export interface Change {
  kind: string
  label: string
  detail: string
  thumbnailUrl?: string
}

export interface ApprovalView {
  id: string
  contentKind: string
  contentId: string
  contentName: string
  thumbnailUrl: string | null
  nodeId: string
  nodeName: string
  requestedByName: string
  requestedById: string
  requestedAt: string
  note: string | null
  changes: Change[]
  state: 'pending' | 'approved' | 'rejected' | 'withdrawn'
  levels: Level[]
  currentLevel: number
  decisions: Decision[]
}

export interface Gate {
  /** The requester's name, read before the change's transaction opens. */
  byName: string
  nodeId: string
  nodeName: string
  levels: Level[]
}

export interface HeldChange {
  kind: string
  id: string
  name: string
  action: 'create' | 'update'
  /** For an update: what the item becomes once approved (the library applies it). */
  proposal: Record<string, unknown> | null
  changes: Change[]
}

export interface PendingMark {
  state: 'pending'
  requestId: string
}

/** What the content library and media do for the approvals: apply an approved update, discard a held creation. */
/**
 * Who applies or discards a held change of some kinds. Content registers one for its kinds,
 * media one for `media`, while they are wired (the `heldChanges` hook).
 */
export interface HeldChangeHandler {
  /** The kinds an approval policy holds for this handler (every kind that can go on a screen, between content and media). */
  readonly kinds: readonly string[]
  /** Applies an approved update inside the decision's transaction. */
  applyInDecision?(tx: Queryable, workspaceId: string, kind: string, id: string, proposal: Record<string, unknown>, requester: Principal): Promise<void>
  /** Applies an approved update after the decision committed (a kind that writes its own table, such as media). */
  applyAfterDecision?(workspaceId: string, kind: string, id: string, proposal: Record<string, unknown>, requester: Principal): Promise<void>
  discardNew(workspaceId: string, kind: string, id: string): Promise<void>
  /** After an approval committed: republish the screens that show the item. */
  changed(workspaceId: string, kind: string, id: string): Promise<void>
}

const DEFAULT_POLICY: ApprovalPolicy = { required: false, inheritFromParent: true, escalateUpTiers: false, allowSharedExemptions: false, approvers: [] }

function policyOf(r: ApprovalPolicyRow | undefined): ApprovalPolicy {
  if (!r) return { ...DEFAULT_POLICY, approvers: [] }
  return {
    required: r.required === 1,
    inheritFromParent: r.inherit_from_parent === 1,
    escalateUpTiers: r.escalate_up_tiers === 1,
    allowSharedExemptions: r.allow_shared_exemptions === 1,
    approvers: JSON.parse(r.approvers) as string[],
  }
}

export class ApprovalService {
  private readonly repo: ApprovalRepository

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    /** The workspace's users: approvers and requesters by name. */
    private readonly users: Pick<UserService, 'member'>,
    private readonly outbox: EventOutbox,
    private readonly log: { error(obj: unknown, msg: string): void },
    /** The handlers of held changes, by kind (content and media join while they are wired). */
    private readonly handlers: Listeners<HeldChangeHandler> = new Listeners(),
  ) {
    this.repo = new ApprovalRepository(db.kysely)
  }

  /**
   * Whether an approval policy holds changes of `kind`: the kinds the handlers joined with
   * (content: every kind that can go on a screen; media: files).
   */
  governs(kind: string): boolean {
    return this.handlers.all().some((h) => h.kinds.includes(kind))
  }

  private handlerFor(kind: string): HeldChangeHandler {
    const h = this.handlers.all().find((x) => x.kinds.includes(kind))
    if (!h) throw new Error(`no handler of held ${kind} changes is wired`)
    return h
  }

  // ---- policies ----------------------------------------------------------------------

  /** The policy in force at `nodeId` and the location it comes from (null = the default). */
  async effective(workspaceId: string, nodeId: string | null): Promise<ApprovalPolicy & { sourceNodeId: string | null }> {
    if (nodeId === null) return { ...DEFAULT_POLICY, approvers: [], sourceNodeId: null }
    const rows = new Map((await this.repo.policies(workspaceId)).map((r) => [r.node_id, r]))
    const lineage = await this.nodes.lineage(workspaceId, nodeId)
    for (const [i, id] of lineage.entries()) {
      const own = policyOf(rows.get(id))
      // Own settings apply when the location does not inherit, requires approval itself,
      // or is at the top (nothing to inherit); otherwise its parent's effective policy.
      if (!own.inheritFromParent || own.required || i === lineage.length - 1) return { ...own, sourceNodeId: rows.has(id) ? id : null }
    }
    return { ...DEFAULT_POLICY, approvers: [], sourceNodeId: null }
  }

  private async policyView(workspaceId: string, nodeId: string): Promise<PolicyView> {
    const row = await this.repo.policy(workspaceId, nodeId)
    return { nodeId, ...policyOf(row), effective: await this.effective(workspaceId, nodeId), updatedAt: row?.updated_at ?? null }
  }

  async getPolicy(p: Principal, nodeId: string): Promise<PolicyView> {
    await this.nodes.get(p, nodeId)
    return this.policyView(p.workspaceId, nodeId)
  }

  async putPolicy(p: Principal, nodeId: string, input: Partial<ApprovalPolicy>): Promise<PolicyView> {
    await this.nodes.get(p, nodeId)
    const current = policyOf(await this.repo.policy(p.workspaceId, nodeId))
    const next: ApprovalPolicy = { ...current, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) }
    if (input.approvers) {
      const unique = [...new Set(input.approvers)]
      for (const id of unique)
        if (!(await this.users.member(p.workspaceId, id))) throw validation(`approvers: ${JSON.stringify(id)} is not a user of this workspace.`)
      next.approvers = unique
    }
    await this.repo.savePolicy({
      workspace_id: p.workspaceId,
      node_id: nodeId,
      required: next.required ? 1 : 0,
      inherit_from_parent: next.inheritFromParent ? 1 : 0,
      escalate_up_tiers: next.escalateUpTiers ? 1 : 0,
      allow_shared_exemptions: next.allowSharedExemptions ? 1 : 0,
      approvers: JSON.stringify(next.approvers),
      updated_at: this.clock.now().toISOString(),
    })
    return this.policyView(p.workspaceId, nodeId)
  }

  // ---- holding -----------------------------------------------------------------------

  private async level(workspaceId: string, nodeId: string, approverIds: string[]): Promise<Level> {
    const nodeName = await this.nodes.nameOf(workspaceId, nodeId)
    const names: string[] = []
    for (const id of approverIds) {
      const u = await this.users.member(workspaceId, id)
      names.push(u?.name ?? u?.email ?? id)
    }
    return { nodeId, nodeName: nodeName ?? '', approverIds, approverNames: names }
  }

  /**
   * Null when a change to `kind` content homed at `nodeId` by `p` goes live at once;
   * otherwise the levels its request must pass: the home location (approvers of its
   * effective policy), then, with `escalateUpTiers`, each ancestor that names approvers.
   */
  async gate(p: Principal, kind: string, nodeId: string | null): Promise<Gate | null> {
    if (!this.governs(kind) || nodeId === null || holds(p.grant, 'approval.decide')) return null
    const eff = await this.effective(p.workspaceId, nodeId)
    if (!eff.required) return null
    const levels = [await this.level(p.workspaceId, nodeId, eff.approvers)]
    if (eff.escalateUpTiers) {
      const rows = new Map((await this.repo.policies(p.workspaceId)).map((r) => [r.node_id, r]))
      for (const a of (await this.nodes.lineage(p.workspaceId, nodeId)).slice(1)) {
        if (a === eff.sourceNodeId) continue
        const approvers = policyOf(rows.get(a)).approvers
        if (approvers.length) levels.push(await this.level(p.workspaceId, a, approvers))
      }
    }
    return { byName: await this.actorName(p), nodeId, nodeName: levels[0]!.nodeName, levels }
  }

  private async actorName(p: Principal): Promise<string> {
    if (p.actor.kind === 'user' && p.actor.id) {
      const u = await this.users.member(p.workspaceId, p.actor.id)
      return u?.name ?? u?.email ?? p.actor.id
    }
    return p.actor.name ?? actorRef(p)
  }

  /** Records a held change (inside the change's transaction) and its `approval.requested` event. */
  async open(tx: Queryable, p: Principal, gate: Gate, change: HeldChange): Promise<PendingMark> {
    const id = this.ids.next('approval')
    const now = this.clock.now().toISOString()
    const byName = gate.byName
    await this.repo.insert(
      {
        id,
        workspace_id: p.workspaceId,
        content_kind: change.kind,
        content_id: change.id,
        content_name: change.name,
        action: change.action,
        proposal: change.proposal ? JSON.stringify(change.proposal) : null,
        changes: JSON.stringify(change.changes),
        node_id: gate.nodeId,
        node_name: gate.nodeName,
        requested_by_id: actorRef(p),
        requested_by_name: byName,
        requested_at: now,
        note: null,
        state: 'pending',
        levels: JSON.stringify(gate.levels),
        current_level: 0,
        decisions: '[]',
        updated_at: now,
      },
      tx.kysely,
    )
    const data: EventData['approval.requested'] = {
      approvalId: id,
      contentKind: change.kind,
      contentId: change.id,
      contentName: change.name,
      nodeId: gate.nodeId,
      requestedById: actorRef(p),
      requestedByName: byName,
    }
    await this.outbox.record(tx, { event: 'approval.requested', workspaceId: p.workspaceId, occurredAt: now, data: { ...data } })
    return { state: 'pending', requestId: id }
  }

  /** After the change's transaction committed: hand its events on. */
  dispatched(): void {
    void this.outbox.dispatch().catch((err) => this.log.error({ err }, 'outbox dispatch failed'))
  }

  /** The pending request holding an update of the item, if any. */
  pendingUpdate(workspaceId: string, kind: string, id: string, k?: Executor): Promise<ApprovalRequestRow | undefined> {
    return this.repo.latestFor(workspaceId, kind, id, 'update', ['pending'], k)
  }

  /** The request of a held creation not approved (yet), if any: such an item may not play. */
  async unapprovedCreation(workspaceId: string, kind: string, id: string): Promise<ApprovalRequestRow | undefined> {
    if (!this.governs(kind)) return undefined
    const r = await this.repo.latestFor(workspaceId, kind, id, 'create', ['pending', 'approved', 'rejected', 'withdrawn'])
    return r && r.state !== 'approved' ? r : undefined
  }

  /** `{state: 'pending', requestId}` while a change of the item awaits approval; null otherwise. */
  async pendingMark(workspaceId: string, kind: string, id: string): Promise<PendingMark | null> {
    if (!this.governs(kind)) return null
    const r = await this.repo.latestFor(workspaceId, kind, id, null, ['pending'])
    return r ? { state: 'pending', requestId: r.id } : null
  }

  /** A held creation edited before approval: the request follows the item's new name and contents. */
  async refreshCreation(tx: Queryable, r: ApprovalRequestRow, name: string, changes: Change[]): Promise<void> {
    await this.repo.refresh(
      r.workspace_id,
      r.id,
      { content_name: name, changes: JSON.stringify(changes), updated_at: this.clock.now().toISOString() },
      tx.kysely,
    )
  }

  // ---- reading -----------------------------------------------------------------------

  private view(r: ApprovalRequestRow): ApprovalView {
    return {
      id: r.id,
      contentKind: r.content_kind,
      contentId: r.content_id,
      contentName: r.content_name,
      thumbnailUrl: null,
      nodeId: r.node_id,
      nodeName: r.node_name,
      requestedByName: r.requested_by_name,
      requestedById: r.requested_by_id,
      requestedAt: r.requested_at,
      note: r.note,
      changes: JSON.parse(r.changes) as Change[],
      state: r.state as ApprovalView['state'],
      levels: JSON.parse(r.levels) as Level[],
      currentLevel: r.current_level,
      decisions: (JSON.parse(r.decisions) as Decision[]).map(({ action: _a, ...d }) => d as Decision),
    }
  }

  private async visible(p: Principal, id: string): Promise<ApprovalRequestRow> {
    const r = await this.repo.byId(p.workspaceId, id)
    if (!r || !(await this.nodes.reaches(p, r.node_id || null))) throw notFound('No such approval request.')
    return r
  }

  async get(p: Principal, id: string): Promise<ApprovalView> {
    return this.view(await this.visible(p, id))
  }

  async list(p: Principal, page: PageRequest, filter: { state?: string | undefined }): Promise<Page<ApprovalView>> {
    const rows = await this.repo.list(p.workspaceId, { state: filter.state, scopeIds: await this.nodes.scopeIds(p) }, page)
    return pageOf(rows, page, (r) => this.view(r))
  }

  // ---- deciding ----------------------------------------------------------------------

  private requester(r: ApprovalRequestRow): Principal {
    const by = r.requested_by_id
    const actor: Principal['actor'] = by.startsWith('apikey:')
      ? { kind: 'key', id: by.slice('apikey:'.length), name: r.requested_by_name, nodeId: null }
      : { kind: 'user', id: by, name: r.requested_by_name, email: null, nodeId: null }
    return { actor, workspaceId: r.workspace_id, grant: 'all', nodeId: null }
  }

  async approve(p: Principal, id: string, note: string | null): Promise<ApprovalView> {
    return this.decide(p, id, 'approve', note)
  }

  async reject(p: Principal, id: string, note: string | null): Promise<ApprovalView> {
    return this.decide(p, id, 'reject', note)
  }

  async withdraw(p: Principal, id: string, note: string | null): Promise<ApprovalView> {
    return this.decide(p, id, 'withdraw', note)
  }

  private async decide(p: Principal, id: string, action: 'approve' | 'reject' | 'withdraw', note: string | null): Promise<ApprovalView> {
    const r = await this.visible(p, id)
    if (r.state !== 'pending') throw new ApiError('conflict', `This request is already ${r.state}.`)
    const levels = JSON.parse(r.levels) as Level[]
    const level = levels[r.current_level]!
    if (action === 'withdraw') {
      if (actorRef(p) !== r.requested_by_id) throw new ApiError('forbidden', 'Only the requester can withdraw a request.')
    } else if (p.actor.kind === 'user') {
      if (!p.actor.id || !level.approverIds.includes(p.actor.id))
        throw new ApiError('forbidden', `You are not an approver of level ${r.current_level} (${level.nodeName || 'workspace'}).`)
    } else if (!(await this.nodes.reaches(p, level.nodeId || null))) {
      throw new ApiError('forbidden', `Level ${r.current_level} (${level.nodeName}) is outside this key's location.`)
    }
    const now = this.clock.now().toISOString()
    const decidedByName = await this.actorName(p)
    const decisions = JSON.parse(r.decisions) as Decision[]
    decisions.push({ level: r.current_level, decidedById: actorRef(p), decidedByName, decidedAt: now, note, action })
    const last = r.current_level + 1 >= levels.length
    const state = action === 'approve' ? (last ? 'approved' : 'pending') : action === 'reject' ? 'rejected' : 'withdrawn'
    const nextLevel = action === 'approve' && !last ? r.current_level + 1 : r.current_level
    const applies = state === 'approved' && r.action === 'update' && r.proposal !== null
    const proposal = applies ? (JSON.parse(r.proposal!) as Record<string, unknown>) : null
    await this.db.transaction(async (tx) => {
      const moved = await this.repo.decide(
        r.workspace_id,
        r.id,
        r.current_level,
        { state, current_level: nextLevel, decisions: JSON.stringify(decisions), updated_at: now },
        tx.kysely,
      )
      if (!moved) throw new ApiError('conflict', 'This request was decided meanwhile; read it again.')
      if (proposal) await this.handlerFor(r.content_kind).applyInDecision?.(tx, r.workspace_id, r.content_kind, r.content_id, proposal, this.requester(r))
      if (state !== 'pending') {
        const data: EventData['approval.decided'] = {
          approvalId: r.id,
          contentKind: r.content_kind,
          contentId: r.content_id,
          contentName: r.content_name,
          state,
          decidedById: actorRef(p),
          decidedByName: decisions[decisions.length - 1]!.decidedByName,
          note,
        }
        await this.outbox.record(tx, { event: 'approval.decided', workspaceId: r.workspace_id, occurredAt: now, data: { ...data } })
      }
    })
    this.dispatched()
    if (proposal) await this.handlerFor(r.content_kind).applyAfterDecision?.(r.workspace_id, r.content_kind, r.content_id, proposal, this.requester(r))
    if (state === 'approved') await this.handlerFor(r.content_kind).changed(r.workspace_id, r.content_kind, r.content_id)
    if ((state === 'rejected' || state === 'withdrawn') && r.action === 'create') {
      await this.handlerFor(r.content_kind)
        .discardNew(r.workspace_id, r.content_kind, r.content_id)
        .catch((err) => {
          if (!(err instanceof ApiError)) this.log.error({ err, id: r.id }, 'discarding a rejected new item failed')
        })
    }
    return this.view((await this.repo.byId(r.workspace_id, r.id))!)
  }

  /** Pending requests about an item that is being deleted end as withdrawn (inside the delete's transaction). */
  async closeFor(tx: Queryable, workspaceId: string, kind: string, contentId: string): Promise<void> {
    for (;;) {
      const r = await this.repo.latestFor(workspaceId, kind, contentId, null, ['pending'], tx.kysely)
      if (!r) return
      const now = this.clock.now().toISOString()
      await this.repo.decide(
        workspaceId,
        r.id,
        r.current_level,
        { state: 'withdrawn', current_level: r.current_level, decisions: r.decisions, updated_at: now },
        tx.kysely,
      )
      const data: EventData['approval.decided'] = {
        approvalId: r.id,
        contentKind: r.content_kind,
        contentId: r.content_id,
        contentName: r.content_name,
        state: 'withdrawn',
        decidedById: r.requested_by_id,
        decidedByName: null,
        note: 'The content was deleted.',
      }
      await this.outbox.record(tx, { event: 'approval.decided', workspaceId, occurredAt: now, data: { ...data } })
    }
  }
}
