// What the CAP feeds domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { CapService, CapWorker } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** CAP alert feeds: their settings, the alert log, and the documents they receive. */
    capFeeds: CapService
    /** Expires CAP alerts and fetches the pull feeds (tests drive it with runOnce()). */
    capWorker: CapWorker
  }
}
