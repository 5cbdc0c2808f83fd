// Platform status: the database's and the broker's health, measured and kept as incidents.
import { performance } from 'node:perf_hooks'
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { StatusRepository } from './StatusRepository.js'
import { StatusService } from './StatusService.js'

export { default as statusRoutes } from './statusRoutes.js'

export const statusModule = defineModule<Pick<P, 'db' | 'clock' | 'ids' | 'broker'>, Pick<D, 'status'>>({
  name: 'status',
  needs: { db: true, clock: true, ids: true, broker: true },
  provides: { status: true },
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
