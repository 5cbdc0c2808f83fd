// Emergencies (DESIGN "Emergencies"): content on the target screens above everything,
// until cleared. Statuses: `active`, then `cleared`. Casts on those screens pause
// (refreshCastPause) and resume when it is cleared. Start and clear are announced on the
// event bus as `emergency.started` / `emergency.cleared`.
import type { Clock, IdGenerator } from '../clock.js'
import type { Database } from '../db/Database.js'
import { actorRef, type Principal } from '../auth/Principal.js'
import { ApiError } from '../errors.js'
import type { EventBus } from '../events/EventBus.js'
import type { NodeService } from './NodeService.js'
import type { ContentKind } from '@svc/shared/mqtt/index'
import { inList, type Takeover, type TargetInput } from '../devicelink/Takeover.js'
import { castsOnScreens, refreshCastPause, type MarkDirty } from './CastService.js'

export const EMERGENCY_STATUSES = ['active', 'cleared'] as const
export type EmergencyStatus = (typeof EMERGENCY_STATUSES)[number]

interface EmergencyRow {
  id: string
  workspace_id: string
  node_id: string | null
  content_kind: string
  content_id: string
  content_name: string | null
  message: string | null
  scope_kind: string
  scope_node_id: string | null
  status: EmergencyStatus
  screen_count: number
  screens_released: number | null
  started_at: string
  cleared_at: string | null
  created_by: string
  cleared_by: string | null
}

export interface EmergencyView {
  id: string
  kind: 'emergency'
  status: EmergencyStatus
  contentKind: string
  contentId: string
  contentName: string | null
  message: string | null
  scopeKind: string
  scopeNodeId: string | null
  screenCount: number
  startedAt: string
  clearedAt: string | null
  screensReleased: number | null
}

const view = (r: EmergencyRow): EmergencyView => ({
  id: r.id,
  kind: 'emergency',
  status: r.status,
  contentKind: r.content_kind,
  contentId: r.content_id,
  contentName: r.content_name,
  message: r.message,
  scopeKind: r.scope_kind,
  scopeNodeId: r.scope_node_id,
  screenCount: r.screen_count,
  startedAt: r.started_at,
  clearedAt: r.cleared_at,
  screensReleased: r.screens_released,
})

export interface EmergencyInput extends TargetInput {
  contentKind: ContentKind
  contentId: string
  contentName?: string | undefined
  message?: string | undefined
}

export class EmergencyService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly nodes: NodeService,
    private readonly takeover: Takeover,
    private readonly markDirty: MarkDirty,
    private readonly events: EventBus,
  ) {}

  private async row(p: Principal, id: string): Promise<EmergencyRow> {
    return this.nodes.findReachable<EmergencyRow>(p, 'emergencies', id, 'emergency')
  }

  async get(p: Principal, id: string): Promise<EmergencyView> {
    return view(await this.row(p, id))
  }

  async list(p: Principal, filter: { status?: string | undefined; limit: number }): Promise<EmergencyView[]> {
    const scope = await this.nodes.scopeClause(p, 'node_id')
    let where = `workspace_id = ?${scope.sql}`
    const params: (string | number)[] = [p.workspaceId, ...scope.params]
    if (filter.status) {
      where += ' AND status = ?'
      params.push(filter.status)
    }
    const rows = await this.db.all<EmergencyRow>(`SELECT * FROM emergencies WHERE ${where} ORDER BY started_at DESC, id DESC LIMIT ?`, [...params, filter.limit])
    return rows.map(view)
  }

  async start(p: Principal, input: EmergencyInput): Promise<EmergencyView> {
    const target = await this.takeover.resolveTarget(p, input)
    const contentName = await this.takeover.checkContent(p.workspaceId, input.contentKind, input.contentId, target)
    const id = this.ids.next('emergency')
    const at = this.clock.now().toISOString()
    const screenIds = target.screens.map((s) => s.id)
    await this.db.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO emergencies (id, workspace_id, node_id, content_kind, content_id, content_name, message, scope_kind, scope_node_id, status, screen_count, started_at, created_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?)`,
        [
          id,
          p.workspaceId,
          target.scopeNodeId ?? p.nodeId,
          input.contentKind,
          input.contentId,
          input.contentName?.trim().slice(0, 200) || contentName?.slice(0, 200) || null,
          input.message?.trim().slice(0, 1000) || null,
          target.scopeKind,
          target.scopeNodeId,
          screenIds.length,
          at,
          actorRef(p),
        ],
      )
      for (let i = 0; i < screenIds.length; i += 500) {
        const chunk = screenIds.slice(i, i + 500)
        await tx.run(`INSERT INTO emergency_screens (emergency_id, screen_id, active) VALUES ${chunk.map(() => '(?, ?, 1)').join(',')}`, chunk.flatMap((s) => [id, s]))
      }
      await refreshCastPause(tx, await castsOnScreens(tx, screenIds))
    })
    await this.markDirty(p.workspaceId, screenIds)
    const v = await this.get(p, id)
    await this.events.publish({ event: 'emergency.started', workspaceId: p.workspaceId, occurredAt: at, data: { ...v } })
    return v
  }

  /** Clears it: its screens go back to their cast or assignment unless another emergency holds them. */
  async clear(p: Principal, id: string): Promise<EmergencyView> {
    const r = await this.row(p, id)
    const at = this.clock.now().toISOString()
    const screenIds = await this.db.transaction(async (tx) => {
      const u = await tx.run("UPDATE emergencies SET status = 'cleared', cleared_at = ?, cleared_by = ? WHERE id = ? AND status = 'active'", [at, actorRef(p), id])
      if (u.changes !== 1) return null
      const rows = await tx.all<{ screen_id: string }>('SELECT screen_id FROM emergency_screens WHERE emergency_id = ? AND active = 1', [id])
      await tx.run('UPDATE emergency_screens SET active = 0 WHERE emergency_id = ?', [id])
      const ids = rows.map((x) => x.screen_id)
      let stillHeld = 0
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500)
        const h = await tx.get<{ n: number }>(
          `SELECT COUNT(DISTINCT es.screen_id) AS n FROM emergency_screens es JOIN emergencies e ON e.id = es.emergency_id
            WHERE es.active = 1 AND e.status = 'active' AND es.screen_id IN (${inList(chunk.length)})`,
          chunk,
        )
        stillHeld += h?.n ?? 0
      }
      await tx.run('UPDATE emergencies SET screens_released = ? WHERE id = ?', [ids.length - stillHeld, id])
      await refreshCastPause(tx, await castsOnScreens(tx, ids))
      return ids
    })
    if (screenIds === null) throw new ApiError('already_inactive', 'The emergency has already been cleared.')
    await this.markDirty(r.workspace_id, screenIds)
    const v = await this.get(p, id)
    await this.events.publish({ event: 'emergency.cleared', workspaceId: p.workspaceId, occurredAt: at, data: { ...v } })
    return v
  }
}
