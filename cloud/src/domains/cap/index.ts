// What other domains use of CAP feeds: its public surface. The module that wires it is in module.ts.
export type { CapService } from './CapService.js'
export type { CapWorker } from './CapWorker.js'
