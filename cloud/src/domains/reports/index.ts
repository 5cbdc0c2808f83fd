// What other domains may use of the reports domain.
export type { AvailabilityService } from './AvailabilityService.js'
export type { PanelHistory } from './PanelHistory.js'
export type { AvailabilityRollup } from './AvailabilityRollup.js'
export type { ReportSubscriptionWorker, ReportSubscriptions } from './ReportSubscriptions.js'
