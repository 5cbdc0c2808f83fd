// What other domains use of agentlogs: its public surface. The module that wires it is in module.ts.
export type { AgentLogService } from './AgentLogService.js'
