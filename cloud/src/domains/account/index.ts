// What other domains use of account: its public surface. The module that wires it is in module.ts.
export type { WorkspaceService } from './WorkspaceService.js'
