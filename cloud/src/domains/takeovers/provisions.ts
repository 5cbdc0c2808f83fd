// What the takeovers domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { CastExpiryWorker, CastService, EmergencyService, ReachReceipts, TakeoverDelivery, TakeoverRecords } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    casts: CastService
    /** The casts and emergencies holding screens, as the device link reads and records them. */
    takeoverRecords: TakeoverRecords
    emergencies: EmergencyService
    /** Counts casts and emergencies applied from the screens' reported state; idle() for tests. */
    takeoverDelivery: TakeoverDelivery
    /** Reach receipts of casts and emergencies, and `emergency.reach`. */
    reach: ReachReceipts
    /** Ends casts at their expiresAt and records emergencies' reach when due (every instance). */
    castExpiry: CastExpiryWorker
  }
}
