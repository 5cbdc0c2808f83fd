// What other domains use of approvals: its public surface. The module that wires it is in module.ts.
export type { ApprovalService, Change, PendingMark } from './ApprovalService.js'
export type { HeldChangeHandler } from './ApprovalService.js'
