// What other domains use of screens: its public surface. The module that wires it is in module.ts.
export type { AssignmentService, AssignPlan } from './AssignmentService.js'
export type { PairingService } from './PairingService.js'
export { PANEL_DEFAULT_POLL_SECONDS, PANEL_DEFAULT_SET_ID, PANEL_MAX_POLL_SECONDS, type ScreenPanelService } from './ScreenPanelService.js'
export type { DesiredScreenRow, DriftInputRow, TargetFilter } from './ScreenRepository.js'
export type { MarkDirty, MarkDirtyLater, ScreenRecords, ScreenReport } from './ScreenRecords.js'
export {
  DRIFT_FIELDS,
  DRIFT_STATES,
  deviceScreen,
  driftOf,
  screenDirectory,
  type DeviceDirectory,
  type DriftItem,
  type DriftState,
  type ScreenService,
} from './ScreenService.js'
export { cleanTags, MAX_TAGS_PER_SCREEN, TAG_PATTERN } from './tags.js'
export { resolveSelection, resolveTargets, SCOPE_KINDS, type GroupConditions, type ScopeKind, type TargetScope, type TargetSelection } from './targets.js'
