// What other domains use of the timeline: its public surface. The module that wires it is in module.ts.
export type { TimelineService } from './TimelineService.js'
export type { PreviewService } from './PreviewService.js'
