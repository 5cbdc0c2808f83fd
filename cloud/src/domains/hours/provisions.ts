// What the hours domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { OperatingHoursRecords, OperatingHoursService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Effective operating hours of screens (own, else inherited from the nearest location). */
    operatingHoursRecords: OperatingHoursRecords
    /** Operating hours of locations and screens: read, set, removed. */
    operatingHours: OperatingHoursService
  }
}
