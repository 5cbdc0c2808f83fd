// What other domains use of drift: its public surface. The module that wires it is in module.ts.
export type { DriftChange, DriftService } from './DriftService.js'
export { DRIFT_GRACE_MS } from './DriftService.js'
