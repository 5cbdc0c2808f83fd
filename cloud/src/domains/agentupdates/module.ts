// Agent updates: signed releases of the packed agent, and rollouts that move screens to a
// version in stages through `update` jobs.
import { domainModule } from '../../platform/provisions.js'
import { AgentReleaseService } from './AgentReleaseService.js'
import { AgentRolloutService } from './AgentRolloutService.js'
import { RolloutWorker } from './RolloutWorker.js'
import { UpdateJobDelivery } from './UpdateJobDelivery.js'

export { default as agentUpdateRoutes } from './agentUpdateRoutes.js'

export const agentUpdatesModule = domainModule({
  name: 'agentupdates',
  needs: ['db', 'clock', 'ids', 'config', 'log', 'broker', 'leases', 'running', 'nodes', 'screenRecords', 'mediaStore', 'groups'],
  provides: ['agentReleases', 'agentRollouts', 'agentRolloutWorker'],
  create: ({ db, clock, ids, config, log, broker, leases, running, nodes, screenRecords, mediaStore, groups }) => {
    const agentReleases = new AgentReleaseService(db, clock, ids, mediaStore, {
      maxUnpackedBytes: config.agentReleaseMaxUnpackedBytes,
      maxEntries: config.agentReleaseMaxEntries,
      maxMs: config.agentReleaseReadTimeoutMs,
    })
    const agentRollouts = new AgentRolloutService(db, clock, ids, nodes, screenRecords, agentReleases, config.publicUrl, groups)
    // Update jobs reach devices through the broker, like serial jobs.
    running.add('update job delivery', new UpdateJobDelivery(broker, agentRollouts, log))
    const agentRolloutWorker = new RolloutWorker(agentRollouts, config.rolloutIntervalMs, log).oncePerCloud(leases, 'agent-rollouts')
    running.add('agent rollouts', agentRolloutWorker)
    return { agentReleases, agentRollouts, agentRolloutWorker }
  },
})
