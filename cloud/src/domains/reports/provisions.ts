// What the reports domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { AvailabilityRollup, AvailabilityService, PanelHistory, ReportSubscriptionWorker, ReportSubscriptions } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** The availability report: presence, panel and operating hours over a window. */
    availability: AvailabilityService
    /** The panel's history, recorded from the screens' reports. */
    panelHistory: PanelHistory
    /** The hourly roll-up of the availability history (a worker under a work lease). */
    availabilityRollup: AvailabilityRollup
    /** Reports mailed weekly or monthly. */
    reportSubscriptions: ReportSubscriptions
    /** The worker that mails the due subscriptions (under a work lease). */
    reportSubscriptionWorker: ReportSubscriptionWorker
  }
}
