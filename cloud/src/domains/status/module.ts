// Platform status: the database's and the broker's health, measured and kept as incidents.
import { performance } from 'node:perf_hooks'
import { domainModule } from '../../platform/provisions.js'
import { StatusRepository } from './StatusRepository.js'
import { StatusService } from './StatusService.js'
import { StatusMonitor } from './StatusMonitor.js'

export { default as statusRoutes } from './statusRoutes.js'

export const statusModule = domainModule({
  name: 'status',
  needs: ['db', 'clock', 'ids', 'broker', 'config', 'log', 'leases', 'running'],
  provides: ['status', 'statusMonitor'],
  create: ({ db, clock, ids, broker, config, log, leases, running }) => {
    const reads = new StatusRepository(db.kysely)
    const status = new StatusService(db, clock, ids, {
      database: async () => {
        const t = performance.now()
        await reads.ping()
        return performance.now() - t
      },
      broker: () => broker.probe(),
    })
    const statusMonitor = new StatusMonitor(status, config.statusIntervalMs, log).oncePerCloud(leases, 'status')
    running.add('status monitor', statusMonitor)
    return { status, statusMonitor }
  },
})
