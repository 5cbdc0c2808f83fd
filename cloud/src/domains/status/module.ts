// Platform status: the database's and the broker's health, measured and kept as incidents.
import { performance } from 'node:perf_hooks'
import { domainModule } from '../provisions.js'
import { StatusRepository } from './StatusRepository.js'
import { StatusService } from './StatusService.js'

export { default as statusRoutes } from './statusRoutes.js'

export const statusModule = domainModule({
  name: 'status',
  needs: ['db', 'clock', 'ids', 'broker'],
  provides: ['status'],
  create: ({ db, clock, ids, broker }) => {
    const reads = new StatusRepository(db.kysely)
    return {
      status: new StatusService(db, clock, ids, {
        database: async () => {
          const t = performance.now()
          await reads.ping()
          return performance.now() - t
        },
        broker: () => broker.probe(),
      }),
    }
  },
})
