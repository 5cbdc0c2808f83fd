// Approvals: policies per location, and the requests that hold content changes until decided.
import { Listeners } from '../../platform/hooks.js'
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { ApprovalService, type HeldChangeHandler } from './ApprovalService.js'

export { default as approvalRoutes } from './approvalRoutes.js'

export const approvalsModule = defineModule<Pick<P, 'db' | 'clock' | 'ids' | 'log'> & Pick<D, 'nodes' | 'outbox'>, Pick<D, 'approvals' | 'heldChanges'>>({
  name: 'approvals',
  needs: { db: true, clock: true, ids: true, log: true, nodes: true, outbox: true },
  provides: { approvals: true, heldChanges: true },
  create: ({ db, clock, ids, log, nodes, outbox }) => {
    const heldChanges = new Listeners<HeldChangeHandler>()
    return { approvals: new ApprovalService(db, clock, ids, nodes, outbox, log, heldChanges), heldChanges }
  },
})
