// What other domains use of screenshots: its public surface. The module that wires it is in module.ts.
export type { ScreenshotService } from './ScreenshotService.js'
