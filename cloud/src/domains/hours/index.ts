// What other domains use of operating hours: its public surface. The modules that wire it are in module.ts.
export type { EffectiveHours, OperatingHoursRecords } from './OperatingHoursRecords.js'
export type { OperatingHoursService } from './OperatingHoursService.js'
