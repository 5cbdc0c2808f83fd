// Locations: the node tree every credential, screen and content item is homed in.
import { Listeners } from '../../platform/hooks.js'
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { type NodeRemoval, NodeService, type NodeUsage } from './NodeService.js'

export { default as nodeRoutes } from './nodeRoutes.js'

export const nodesModule = defineModule<Pick<P, 'db' | 'clock' | 'ids'>, Pick<D, 'nodes' | 'nodeUsage' | 'nodeRemoval'>>({
  name: 'nodes',
  needs: { db: true, clock: true, ids: true },
  provides: { nodes: true, nodeUsage: true, nodeRemoval: true },
  create: ({ db, clock, ids }) => {
    const nodeUsage = new Listeners<NodeUsage>()
    const nodeRemoval = new Listeners<NodeRemoval>()
    return { nodes: new NodeService(db, clock, ids, nodeUsage, nodeRemoval), nodeUsage, nodeRemoval }
  },
})
