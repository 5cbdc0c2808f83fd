// What the screenshots domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { ScreenshotService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Screenshot jobs and their PNGs (uploaded by the agent with its device credential). */
    screenshots: ScreenshotService
  }
}
