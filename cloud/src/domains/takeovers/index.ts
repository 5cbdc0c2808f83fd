// What other domains use of takeovers: its public surface. The module that wires it is in module.ts.
export type { HeldCast } from './CastRepository.js'
export type { CastService } from './CastService.js'
export type { HeldEmergency } from './EmergencyRepository.js'
export type { EmergencyService } from './EmergencyService.js'
export type { TakeoverDelivery } from './TakeoverDelivery.js'
export type { TakeoverRecords } from './TakeoverRecords.js'
export type { EmergencyView } from './takeoverSchemas.js'
export type { TakeoverPlan } from './Takeover.js'
