// What other domains use of nodes: its public surface. The module that wires it is in module.ts.
export { cleanName, type NodeService } from './NodeService.js'
export type { NodeRemoval, NodeUsage } from './NodeService.js'
