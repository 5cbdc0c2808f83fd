// What the approvals domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { Hook } from '../../platform/hooks.js'
import type { ApprovalService, HeldChangeHandler } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Approval policies per location and the requests that hold content changes. */
    approvals: ApprovalService
    /** Who applies or discards an approved or rejected change, per kind. */
    heldChanges: Hook<HeldChangeHandler>
  }
}
