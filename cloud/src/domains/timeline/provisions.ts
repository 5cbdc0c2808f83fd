// What the timeline domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { PreviewService, TimelineService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** What a screen will play and why, over a window. */
    timeline: TimelineService
    /** What a write would change on the screens it touches (a dry run of the write, then both timelines). */
    timelinePreview: PreviewService
  }
}
