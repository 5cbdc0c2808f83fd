// What the alerts domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { AlertEvaluator, AlertRuleService, AlertWorker } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    alertRules: AlertRuleService
    /** What the device link feeds: screen status changes, panel power, storage, play-log limits. */
    alerts: AlertEvaluator
    alertWorker: AlertWorker
  }
}
