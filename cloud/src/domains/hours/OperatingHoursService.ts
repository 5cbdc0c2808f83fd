// Operating hours of locations and screens: read (own and effective), set, removed. A change
// republishes the desired state of every screen it reaches (the screen, or every screen at
// or under the location), which carries the effective hours to the player.
import { Type, type Static } from '@sinclair/typebox'
import { OperatingHoursSchema, validateOperatingHours, type OperatingHours } from '@svc/shared/schedule/index'
import type { Clock } from '../../platform/clock.js'
import { StringEnum } from '../../platform/contract.js'
import type { Database } from '../../platform/db/Database.js'
import { validation } from '../../platform/errors.js'
import type { Principal } from '../../platform/http/Principal.js'
import type { NodeService } from '../nodes/index.js'
import type { MarkDirtyLater, ScreenRecords, ScreenService } from '../screens/index.js'
import type { OperatingHoursRecords } from './OperatingHoursRecords.js'
import { type HoursOwnerKind, OperatingHoursRepository } from './OperatingHoursRepository.js'

export const HoursView = Type.Object({
  ownerKind: StringEnum(['node', 'screen'] as const),
  ownerId: Type.String(),
  hours: Type.Union([OperatingHoursSchema, Type.Null()], { description: 'Its own hours; null when it has none.' }),
  effective: Type.Union(
    [
      Type.Object({
        hours: OperatingHoursSchema,
        source: Type.Object(
          { kind: StringEnum(['node', 'screen'] as const), id: Type.String() },
          { description: 'Whose hours apply: its own, or the location they come from.' },
        ),
      }),
      Type.Null(),
    ],
    { description: 'The hours that apply (its own, else the nearest location’s up the tree); null = none: the panel is not switched by time.' },
  ),
})
export type HoursViewT = Static<typeof HoursView>

export class OperatingHoursService {
  private readonly repo: OperatingHoursRepository

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly nodes: Pick<NodeService, 'get' | 'subtree'>,
    private readonly screens: Pick<ScreenService, 'get'>,
    private readonly screenRows: Pick<ScreenRecords, 'targets'>,
    private readonly records: OperatingHoursRecords,
    private readonly markDirty: MarkDirtyLater,
  ) {
    this.repo = new OperatingHoursRepository(db.kysely)
  }

  async get(p: Principal, kind: HoursOwnerKind, id: string): Promise<HoursViewT> {
    const nodeId = await this.home(p, kind, id)
    return this.view(p.workspaceId, kind, id, nodeId)
  }

  async put(p: Principal, kind: HoursOwnerKind, id: string, input: unknown): Promise<HoursViewT> {
    const nodeId = await this.home(p, kind, id)
    const issues = validateOperatingHours(input)
    if (issues.length) throw validation(issues.map((i) => i.message).join('; '))
    const hours = input as OperatingHours
    await this.repo.put(p.workspaceId, kind, id, JSON.stringify({ weekly: hours.weekly, exceptions: hours.exceptions }), this.clock.now().toISOString())
    await this.republish(p.workspaceId, kind, id)
    return this.view(p.workspaceId, kind, id, nodeId)
  }

  async remove(p: Principal, kind: HoursOwnerKind, id: string): Promise<HoursViewT> {
    const nodeId = await this.home(p, kind, id)
    if (await this.repo.delete(p.workspaceId, kind, id)) await this.republish(p.workspaceId, kind, id)
    return this.view(p.workspaceId, kind, id, nodeId)
  }

  /** 404 for what the credential does not reach; answers the owner's home node (a screen's) or the node itself. */
  private async home(p: Principal, kind: HoursOwnerKind, id: string): Promise<string | null> {
    if (kind === 'node') return (await this.nodes.get(p, id)).id
    return (await this.screens.get(p, id)).nodeId
  }

  private async view(workspaceId: string, kind: HoursOwnerKind, id: string, nodeId: string | null): Promise<HoursViewT> {
    const effective =
      kind === 'screen'
        ? ((await this.records.effective(workspaceId, [{ id, node_id: nodeId }])).get(id) ?? null)
        : await this.records.effectiveForNode(workspaceId, id)
    return { ownerKind: kind, ownerId: id, hours: await this.records.own(workspaceId, kind, id), effective }
  }

  private async republish(workspaceId: string, kind: HoursOwnerKind, id: string): Promise<void> {
    const screens =
      kind === 'screen'
        ? () => Promise.resolve([id])
        : async () => (await this.screenRows.targets(workspaceId, { scopeIds: null, nodeIds: await this.nodes.subtree(workspaceId, id) })).map((s) => s.id)
    await this.markDirty(workspaceId, screens).catch(() => undefined) // the publisher logs failures
  }
}
