// What other domains use of content: its public surface. The module that wires it is in module.ts.
export type { ContentAccess } from './ContentAccess.js'
export type { ContentPlayback } from './ContentPlayback.js'
export type { ContentRecall } from './ContentRecall.js'
export type { ContentRef, ContentResolver, Playability, ScheduleWith } from './ContentResolver.js'
export type { ContentChangeListener, ContentPlan, ContentService, ContentUsage } from './ContentService.js'
export type { ContentSharing } from './ContentSharing.js'
export { KINDS } from './kinds.js'
