// What other domains use of the audit log: the trail (sign-in paths call recordSignIn) and
// its record types. The module that wires it is in module.ts.
export type { AuditTrail, VerifyResult } from './AuditTrail.js'
export type { AuditActor, AuditChange, AuditEntry, AuditOutcome, AuditRecord, AuditResource, AuditVia, SignInRecord } from './types.js'
export { actFor } from './actingFor.js'
