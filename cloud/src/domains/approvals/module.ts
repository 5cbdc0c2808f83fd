// Approvals: policies per location, and the requests that hold content changes until decided.
import { Listeners } from '../../platform/hooks.js'
import { domainModule } from '../../platform/provisions.js'
import { ApprovalService, type HeldChangeHandler } from './ApprovalService.js'

export { default as approvalRoutes } from './approvalRoutes.js'

export const approvalsModule = domainModule({
  name: 'approvals',
  needs: ['db', 'clock', 'ids', 'log', 'nodes', 'users', 'outbox'],
  provides: ['approvals', 'heldChanges'],
  create: ({ db, clock, ids, log, nodes, users, outbox }) => {
    const heldChanges = new Listeners<HeldChangeHandler>()
    return { approvals: new ApprovalService(db, clock, ids, nodes, users, outbox, log, heldChanges), heldChanges }
  },
})
