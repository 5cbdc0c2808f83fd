// What other domains use of agentupdates: its public surface. The module that wires it is in module.ts.
export type { AgentReleaseService } from './AgentReleaseService.js'
export type { AgentRolloutService } from './AgentRolloutService.js'
export type { RolloutWorker } from './RolloutWorker.js'
