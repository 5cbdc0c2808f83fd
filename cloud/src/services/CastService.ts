// Casts (SPEC "Cast", "Casts"): put content on screens now, above their assignment, until
// cleared or expiresAt. Statuses (docs/decisions.md): `active`; `paused` while an
// emergency holds every screen the cast still plays on; ended as `cleared`, `expired` or
// `replaced` (a newer cast took all of its screens; `replacedBy` names it). Which screens a
// cast still holds is cast_screens.state = 'active'. Every change marks the affected
// screens dirty so their desired state is republished.
import type { Clock, IdGenerator } from '../clock.js'
import type { Database, Queryable } from '../db/Database.js'
import { actorRef, type Principal } from '../auth/Principal.js'
import { ApiError } from '../errors.js'
import type { NodeService } from './NodeService.js'
import type { ContentKind } from '@svc/shared/mqtt/index'
import { inList, parseExpiresAt, type ScopeKind, type Takeover, type TargetInput } from '../devicelink/Takeover.js'

export const CAST_STATUSES = ['active', 'paused', 'cleared', 'expired', 'replaced'] as const
export type CastStatus = (typeof CAST_STATUSES)[number]
export const ENDED_CAST_STATUSES: readonly CastStatus[] = ['cleared', 'expired', 'replaced']
export const CAST_STATUS_FILTERS = [...CAST_STATUSES, 'ended'] as const

interface CastRow {
  id: string
  workspace_id: string
  node_id: string | null
  content_kind: string
  content_id: string
  content_name: string | null
  scope_kind: string
  scope_node_id: string | null
  status: CastStatus
  screen_count: number
  triggered_at: string
  expires_at: string | null
  ended_at: string | null
  replaced_by: string | null
  created_by: string
}

export interface CastView {
  id: string
  kind: 'cast'
  status: CastStatus
  contentKind: string
  contentId: string
  contentName: string | null
  scopeKind: string
  scopeNodeId: string | null
  screenCount: number
  triggeredAt: string
  expiresAt: string | null
  endedAt: string | null
  replacedBy: string | null
}

const view = (r: CastRow): CastView => ({
  id: r.id,
  kind: 'cast',
  status: r.status,
  contentKind: r.content_kind,
  contentId: r.content_id,
  contentName: r.content_name,
  scopeKind: r.scope_kind,
  scopeNodeId: r.scope_node_id,
  screenCount: r.screen_count,
  triggeredAt: r.triggered_at,
  expiresAt: r.expires_at,
  endedAt: r.ended_at,
  replacedBy: r.replaced_by,
})

export interface CastInput extends TargetInput {
  contentKind: ContentKind
  contentId: string
  expiresAt?: string | number | undefined
  contentName?: string | undefined
}

/** Republishes the desired state of these screens. */
export type MarkDirty = (workspaceId: string, screenIds: string[]) => Promise<void>

/**
 * Sets `paused` / `active` on the given live casts: paused exactly when every screen the
 * cast still holds is under an active emergency. Used by casts and emergencies alike.
 */
export async function refreshCastPause(tx: Queryable, castIds: string[]): Promise<void> {
  if (!castIds.length) return
  const rows = await tx.all<{ cast_id: string; total: number; covered: number }>(
    `SELECT cs.cast_id, COUNT(*) AS total,
            SUM(CASE WHEN EXISTS (SELECT 1 FROM emergency_screens es JOIN emergencies e ON e.id = es.emergency_id
                                   WHERE es.screen_id = cs.screen_id AND es.active = 1 AND e.status = 'active') THEN 1 ELSE 0 END) AS covered
       FROM cast_screens cs WHERE cs.state = 'active' AND cs.cast_id IN (${inList(castIds.length)}) GROUP BY cs.cast_id`,
    castIds,
  )
  for (const r of rows) {
    const status = r.total > 0 && r.covered === r.total ? 'paused' : 'active'
    await tx.run("UPDATE casts SET status = ? WHERE id = ? AND status IN ('active', 'paused')", [status, r.cast_id])
  }
}

/** Live casts holding any of these screens. */
export async function castsOnScreens(tx: Queryable, screenIds: string[]): Promise<string[]> {
  const out = new Set<string>()
  for (let i = 0; i < screenIds.length; i += 500) {
    const chunk = screenIds.slice(i, i + 500)
    const rows = await tx.all<{ cast_id: string }>(`SELECT DISTINCT cast_id FROM cast_screens WHERE state = 'active' AND screen_id IN (${inList(chunk.length)})`, chunk)
    for (const r of rows) out.add(r.cast_id)
  }
  return [...out]
}

export class CastService {
  private readonly changeListeners: (() => void)[] = []

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly takeover: Takeover,
    private readonly markDirty: MarkDirty,
  ) {}

  /** Called after casts are created or end (the expiry timer re-arms on it). */
  onChange(listener: () => void): void {
    this.changeListeners.push(listener)
  }

  private changed(): void {
    for (const l of this.changeListeners) l()
  }

  private async row(p: Principal, id: string): Promise<CastRow> {
    return this.nodes.findReachable<CastRow>(p, 'casts', id, 'cast')
  }

  async get(p: Principal, id: string): Promise<CastView> {
    return view(await this.row(p, id))
  }

  async create(p: Principal, input: CastInput): Promise<CastView> {
    const now = this.clock.now()
    const expiresAt = parseExpiresAt(input.expiresAt, now)
    const target = await this.takeover.resolveTarget(p, input)
    const contentName = await this.takeover.checkContent(p.workspaceId, input.contentKind, input.contentId, target)
    const id = this.ids.next('cast')
    const at = now.toISOString()
    const screenIds = target.screens.map((s) => s.id)
    // the caller's label, else the content's own name
    const name = input.contentName?.trim().slice(0, 200) || contentName?.slice(0, 200) || null
    await this.db.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO casts (id, workspace_id, node_id, content_kind, content_id, content_name, scope_kind, scope_node_id, status, screen_count, triggered_at, expires_at, created_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)`,
        [id, p.workspaceId, target.scopeNodeId ?? p.nodeId, input.contentKind, input.contentId, name, target.scopeKind as ScopeKind, target.scopeNodeId, screenIds.length, at, expiresAt, actorRef(p)],
      )
      // The newer cast takes these screens from older ones; an older cast left with none is replaced.
      const older = await castsOnScreens(tx, screenIds)
      for (let i = 0; i < screenIds.length; i += 500) {
        const chunk = screenIds.slice(i, i + 500)
        await tx.run(`UPDATE cast_screens SET state = 'replaced' WHERE state = 'active' AND screen_id IN (${inList(chunk.length)})`, chunk)
        await tx.run(`INSERT INTO cast_screens (cast_id, screen_id, state) VALUES ${chunk.map(() => "(?, ?, 'active')").join(',')}`, chunk.flatMap((s) => [id, s]))
      }
      for (const o of older) {
        const left = await tx.get<{ n: number }>("SELECT COUNT(*) AS n FROM cast_screens WHERE cast_id = ? AND state = 'active'", [o])
        if (!left?.n) await tx.run("UPDATE casts SET status = 'replaced', replaced_by = ?, ended_at = ? WHERE id = ? AND status IN ('active', 'paused')", [id, at, o])
      }
      await refreshCastPause(tx, [id, ...older])
    })
    await this.markDirty(p.workspaceId, screenIds)
    this.changed()
    return this.get(p, id)
  }

  async list(p: Principal, filter: { status?: string | undefined; limit: number }): Promise<CastView[]> {
    const scope = await this.nodes.scopeClause(p, 'node_id')
    let where = `workspace_id = ?${scope.sql}`
    const params: (string | number)[] = [p.workspaceId, ...scope.params]
    if (filter.status === 'ended') where += ` AND status IN ('cleared', 'expired', 'replaced')`
    else if (filter.status) {
      where += ' AND status = ?'
      params.push(filter.status)
    }
    const rows = await this.db.all<CastRow>(`SELECT * FROM casts WHERE ${where} ORDER BY triggered_at DESC, id DESC LIMIT ?`, [...params, filter.limit])
    return rows.map(view)
  }

  /** Ends the cast now; its screens return to their scheduled content at once. */
  async clear(p: Principal, id: string): Promise<CastView> {
    const r = await this.row(p, id)
    const screens = await this.end(r.workspace_id, id, 'cleared', this.clock.now().toISOString())
    if (screens === null) throw new ApiError('already_inactive', `The cast has already ended (${(await this.row(p, id)).status}).`)
    return this.get(p, id)
  }

  /** Ends every live cast whose expiresAt has passed (the worker and the timer call this). */
  async expireDue(): Promise<number> {
    const now = this.clock.now().toISOString()
    const due = await this.db.all<{ id: string; workspace_id: string; expires_at: string }>(
      "SELECT id, workspace_id, expires_at FROM casts WHERE status IN ('active', 'paused') AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at",
      [now],
    )
    let n = 0
    for (const c of due) if ((await this.end(c.workspace_id, c.id, 'expired', c.expires_at)) !== null) n++
    return n
  }

  /** The earliest expiresAt among live casts (for the precise timer). */
  async nextExpiry(): Promise<string | null> {
    const r = await this.db.get<{ t: string | null }>("SELECT MIN(expires_at) AS t FROM casts WHERE status IN ('active', 'paused') AND expires_at IS NOT NULL")
    return r?.t ?? null
  }

  /** Ends a live cast; returns the screens it released, or null when it was not live. */
  private async end(workspaceId: string, id: string, status: 'cleared' | 'expired', at: string): Promise<string[] | null> {
    const screens = await this.db.transaction(async (tx) => {
      const r = await tx.run("UPDATE casts SET status = ?, ended_at = ? WHERE id = ? AND status IN ('active', 'paused')", [status, at, id])
      if (r.changes !== 1) return null
      const rows = await tx.all<{ screen_id: string }>("SELECT screen_id FROM cast_screens WHERE cast_id = ? AND state = 'active'", [id])
      await tx.run("UPDATE cast_screens SET state = 'ended' WHERE cast_id = ? AND state = 'active'", [id])
      return rows.map((x) => x.screen_id)
    })
    if (screens === null) return null
    await this.markDirty(workspaceId, screens)
    this.changed()
    return screens
  }
}

