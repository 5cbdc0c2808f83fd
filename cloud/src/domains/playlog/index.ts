// What other domains use of playlog: its public surface. The module that wires it is in module.ts.
export type { PlayLogLimitSink, PlayLogService } from './PlayLogService.js'
