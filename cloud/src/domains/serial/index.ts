// What other domains use of serial: its public surface. The module that wires it is in module.ts.
export { SharedSweep } from './SharedSweep.js'
export type { SerialTemplateService } from './SerialTemplateService.js'
export type { PanelIntent, SerialJobService } from './SerialJobService.js'
