// What the serial domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { SerialJobService, SerialTemplateService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    serialTemplates: SerialTemplateService
    serialJobs: SerialJobService
  }
}
