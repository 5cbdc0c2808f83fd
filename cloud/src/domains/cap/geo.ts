// Which of a target's screens are inside a CAP alert's area (areaMatch "geo").
import type { Principal } from '../../platform/http/Principal.js'
import type { TargetScope } from '../screens/index.js'
import type { CapArea } from './capXml.js'

export interface GeoMatcher {
  /** The ids of the target's screens inside one of the areas. */
  inside(p: Principal, target: TargetScope, areas: CapArea[]): Promise<string[]>
}
