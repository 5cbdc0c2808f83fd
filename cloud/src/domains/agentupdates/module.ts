// Agent updates: signed releases of the packed agent, and rollouts that move screens to a
// version in stages through `update` jobs.
import { domainModule } from '../provisions.js'
import { AgentReleaseService } from './AgentReleaseService.js'
import { AgentRolloutService } from './AgentRolloutService.js'

export { default as agentUpdateRoutes } from './agentUpdateRoutes.js'

export const agentUpdatesModule = domainModule({
  name: 'agentupdates',
  needs: ['db', 'clock', 'ids', 'config', 'nodes', 'screenRecords', 'mediaStore', 'groups'],
  provides: ['agentReleases', 'agentRollouts'],
  create: ({ db, clock, ids, config, nodes, screenRecords, mediaStore, groups }) => {
    const agentReleases = new AgentReleaseService(db, clock, ids, mediaStore, {
      maxUnpackedBytes: config.agentReleaseMaxUnpackedBytes,
      maxEntries: config.agentReleaseMaxEntries,
      maxMs: config.agentReleaseReadTimeoutMs,
    })
    const agentRollouts = new AgentRolloutService(db, clock, ids, nodes, screenRecords, agentReleases, config.publicUrl, groups)
    return { agentReleases, agentRollouts }
  },
})
