// What the agentlogs domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { AgentLogService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Requests for a screen agent's recent log lines, and the lines it uploaded (device credential). */
    agentLogs: AgentLogService
  }
}
