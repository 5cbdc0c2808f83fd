// What other domains use of devicelink: its public surface. The module that wires it is in module.ts.
export type { ClusterPresence } from './ClusterPresence.js'
export type { PanelSettingsSource } from './DesiredStateBuilder.js'
export type { DesiredStatePublisher } from './DesiredStatePublisher.js'
export { DevicePolicy } from './DevicePolicy.js'
export { JobDelivery } from './JobDelivery.js'
export type { ScreenStatusChange } from './ScreenPresence.js'
export type { DesiredStateBuilder } from './DesiredStateBuilder.js'
export type { ScreenPresence } from './ScreenPresence.js'
