// What other domains use of status: its public surface. The module that wires it is in module.ts.
export type { StatusService } from './StatusService.js'
export type { StatusMonitor } from './StatusMonitor.js'
