// What the account domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { WorkspaceService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    workspaces: WorkspaceService
  }
}
