// Effective operating hours: a screen's own, else its nearest location's up the tree, else
// none (the panel is left as it is). The desired-state builder reads them for a batch of
// screens; the routes show them beside a location's or a screen's own.
import type { OperatingHours } from '@svc/shared/schedule/index'
import type { Database } from '../../platform/db/Database.js'
import type { NodeService } from '../nodes/index.js'
import { type HoursOwnerKind, OperatingHoursRepository } from './OperatingHoursRepository.js'

export interface EffectiveHours {
  hours: OperatingHours
  /** Whose they are: the screen's own, or the location they are inherited from. */
  source: { kind: HoursOwnerKind; id: string }
}

function parse(text: string): OperatingHours | null {
  try {
    return JSON.parse(text) as OperatingHours
  } catch {
    return null
  }
}

export class OperatingHoursRecords {
  private readonly repo: OperatingHoursRepository

  constructor(
    db: Database,
    private readonly nodes: Pick<NodeService, 'lineage'>,
  ) {
    this.repo = new OperatingHoursRepository(db.kysely)
  }

  /**
   * The effective hours of each screen (`node_id` its home; null = the root, which has none).
   * `lineages`: the locations' lineages already read, kept by a caller asking batch after batch
   * (a report over a whole fleet), so each location's is read once. `ownRows`: 'workspace'
   * reads every row of the workspace in one statement that binds no screen list (the desired
   * state's batches: the same statements for 3 screens or 1,200); 'batch' reads the locations'
   * rows and only these screens' own (a report going through a whole fleet batch by batch,
   * which must not hold every screen's hours at once).
   */
  async effective(
    workspaceId: string,
    screens: readonly { id: string; node_id: string | null }[],
    lineages: Map<string, Promise<string[]>> = new Map(),
    ownRows: 'workspace' | 'batch' = 'workspace',
  ): Promise<Map<string, EffectiveHours | null>> {
    const out = new Map<string, EffectiveHours | null>()
    if (!screens.length) return out
    const rows =
      ownRows === 'batch'
        ? await this.repo.forScreens(
            workspaceId,
            screens.map((s) => s.id),
          )
        : await this.repo.all(workspaceId)
    const own = new Map(rows.map((r) => [`${r.owner_kind}:${r.owner_id}`, r]))
    // Each location's hours are parsed once, shared by the screens that inherit them.
    const nodeHours = new Map<string, OperatingHours | null>()
    const ofNode = (nodeId: string) => {
      if (!nodeHours.has(nodeId)) {
        const row = own.get(`node:${nodeId}`)
        nodeHours.set(nodeId, (row && parse(row.hours)) || null)
      }
      return nodeHours.get(nodeId)!
    }
    const anyNodeHours = rows.some((r) => r.owner_kind === 'node')
    for (const s of screens) {
      const mine = own.get(`screen:${s.id}`)
      const hours = mine && parse(mine.hours)
      if (hours) {
        out.set(s.id, { hours, source: { kind: 'screen', id: s.id } })
        continue
      }
      out.set(s.id, null)
      if (!s.node_id || !anyNodeHours) continue
      let lineage = lineages.get(s.node_id)
      if (!lineage) lineages.set(s.node_id, (lineage = this.nodes.lineage(workspaceId, s.node_id)))
      for (const nodeId of await lineage) {
        const inherited = ofNode(nodeId)
        if (inherited) {
          out.set(s.id, { hours: inherited, source: { kind: 'node', id: nodeId } })
          break
        }
      }
    }
    return out
  }

  /** A location's effective hours: its own, else the nearest above it. */
  async effectiveForNode(workspaceId: string, nodeId: string): Promise<EffectiveHours | null> {
    const rows = await this.repo.all(workspaceId)
    for (const id of await this.nodes.lineage(workspaceId, nodeId)) {
      const row = rows.find((r) => r.owner_kind === 'node' && r.owner_id === id)
      const hours = row && parse(row.hours)
      if (hours) return { hours, source: { kind: 'node', id } }
    }
    return null
  }

  /** A location's or a screen's own hours, or null. */
  async own(workspaceId: string, kind: HoursOwnerKind, id: string): Promise<OperatingHours | null> {
    const row = (await this.repo.all(workspaceId)).find((r) => r.owner_kind === kind && r.owner_id === id)
    return row ? parse(row.hours) : null
  }
}
