// What the devicelink domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { Hook } from '../../platform/hooks.js'
import type { ContentResolver } from '../content/index.js'
import type { MarkDirtyLater, ScreenReport } from '../screens/index.js'
import type {
  ClusterPresence,
  DesiredStateBuilder,
  DesiredStatePublisher,
  DevicePolicy,
  PanelSettingsSource,
  ScreenPresence,
  ScreenStatusChange,
} from './index.js'

declare module '../../platform/provisions.js' {
  /** Built by app.ts before the broker, which it guards; with the test seam of panel settings. */
  interface PlatformProvisions {
    /** Who may connect, publish and subscribe on the broker (it exists before the broker starts). */
    devicePolicy: DevicePolicy
    /** Test seam: panel settings of the test's own (undefined = the screen's stored panel profile). */
    panelSettings: PanelSettingsSource | undefined
  }

  interface DomainProvisions {
    /** The content library as the device link sees it (exists, playability, sharing, descriptions). */
    contentResolver: ContentResolver
    desiredState: DesiredStateBuilder
    /** markDirty(workspaceId, screenIds): republish those screens' desired state. */
    desiredPublisher: DesiredStatePublisher
    markDirty: MarkDirtyLater
    /** Screen status and reported state from the device link. */
    presence: ScreenPresence
    /** Screens gone online or offline, in batches, as the outbox dispatches them. */
    screenStatuses: Hook<(changes: ScreenStatusChange[]) => void | Promise<void>>
    /** A screen's reported state (what plays, its panel, its storage). */
    screenReports: Hook<(r: ScreenReport) => void | Promise<void>>
    /** Shared presence's heartbeat and dead-instance sweep; null on a single instance. */
    clusterPresence: ClusterPresence | null
  }
}
