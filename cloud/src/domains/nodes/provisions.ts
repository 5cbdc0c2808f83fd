// What the nodes domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { Hook } from '../../platform/hooks.js'
import type { NodeRemoval, NodeService, NodeUsage } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    nodes: NodeService
    /** What each domain keeps at a location, so deleting a used location is refused. */
    nodeUsage: Hook<NodeUsage>
    /** What each domain does inside a location's delete transaction. */
    nodeRemoval: Hook<NodeRemoval>
  }
}
