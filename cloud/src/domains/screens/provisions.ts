// What the screens domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { Hook } from '../../platform/hooks.js'
import type { AssignmentService, PairingService, ScreenPanelService, ScreenRecords, ScreenService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    screens: ScreenService
    /** The screens' rows as other domains may read them (and the device link bump their desired version). */
    screenRecords: ScreenRecords
    /** A screen paired, moved or renamed: (workspaceId, screenId). */
    screenChanges: Hook<(workspaceId: string, screenId: string) => void>
    pairing: PairingService
    /** Panel profiles; `panelProfile(workspaceId, screenId)` feeds `desired.panel`. */
    screenPanels: ScreenPanelService
    /** Screen assignments (assign, bulk-assign). */
    assignments: AssignmentService
  }
}
