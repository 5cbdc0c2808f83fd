// What the drift domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { DriftService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Whether each screen does what it was told: judged and stored, with its changes as a hook. */
    drift: DriftService
  }
}
