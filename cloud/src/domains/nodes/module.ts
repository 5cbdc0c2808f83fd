// Locations: the node tree every credential, screen and content item is homed in.
import { Listeners } from '../../platform/hooks.js'
import { domainModule } from '../../platform/provisions.js'
import { type NodeRemoval, NodeService, type NodeUsage } from './NodeService.js'

export { default as nodeRoutes } from './nodeRoutes.js'

export const nodesModule = domainModule({
  name: 'nodes',
  needs: ['db', 'clock', 'ids'],
  provides: ['nodes', 'nodeUsage', 'nodeRemoval'],
  create: ({ db, clock, ids }) => {
    const nodeUsage = new Listeners<NodeUsage>()
    const nodeRemoval = new Listeners<NodeRemoval>()
    return { nodes: new NodeService(db, clock, ids, nodeUsage, nodeRemoval), nodeUsage, nodeRemoval }
  },
})
