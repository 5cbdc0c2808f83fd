// What other domains use of alerts: its public surface. The module that wires it is in module.ts.
export type { AlertRuleService } from './AlertRuleService.js'
export type { AlertEvaluator } from './AlertEvaluator.js'
export type { AlertWorker } from './AlertWorker.js'
