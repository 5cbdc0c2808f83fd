// Remote logs: requests for a screen agent's recent log lines and what it uploaded.
import { domainModule } from '../../platform/provisions.js'
import { AgentLogJobDelivery } from './AgentLogJobDelivery.js'
import { AgentLogService } from './AgentLogService.js'

export { default as agentLogRoutes } from './agentLogRoutes.js'

export const agentLogsModule = domainModule({
  name: 'agentlogs',
  needs: ['db', 'clock', 'ids', 'config', 'log', 'broker', 'running', 'housekeeping', 'rateLimiter', 'screens'],
  provides: ['agentLogs'],
  create: ({ db, clock, ids, config, log, broker, running, housekeeping, rateLimiter, screens }) => {
    const budgets = { screenBytes: config.agentLogScreenBytes, workspaceBytes: config.agentLogWorkspaceBytes }
    const agentLogs = new AgentLogService(db, clock, ids, screens, rateLimiter, budgets, config.publicUrl)
    // Log requests reach devices through the broker, like screenshot jobs.
    running.add('agent log job delivery', new AgentLogJobDelivery(broker, agentLogs, log))
    housekeeping.add({ name: 'old agent logs', run: () => agentLogs.purgeOld() })
    return { agentLogs }
  },
})
