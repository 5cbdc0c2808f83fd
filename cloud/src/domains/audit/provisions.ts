// What the audit domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { AuditTrail } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** The audit log: the HTTP edge records every write in it; sign-in paths call recordSignIn. */
    audit: AuditTrail
  }
}
