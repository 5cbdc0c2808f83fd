// What the agentupdates domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { AgentReleaseService, AgentRolloutService, RolloutWorker } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Moves rollouts on to their next stage (one instance at a time). */
    agentRolloutWorker: RolloutWorker
    /** Signed packed-agent tarballs (bytes in the file store), downloaded by devices a rollout sent them to. */
    agentReleases: AgentReleaseService
    /** Moves of screens to an agent version in stages (update jobs), and each screen's target version (drift). */
    agentRollouts: AgentRolloutService
  }
}
