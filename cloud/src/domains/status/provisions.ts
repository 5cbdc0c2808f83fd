// What the status domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { StatusMonitor, StatusService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Measures the platform's status (one instance at a time). */
    statusMonitor: StatusMonitor
    status: StatusService
  }
}
