// Which of a target's screens are inside a CAP alert's area (areaMatch "geo").
import type { Database } from '../../platform/db/Database.js'
import type { Principal } from '../../platform/http/Principal.js'
import type { NodeService } from '../nodes/index.js'
import type { GroupConditions, ScreenRecords, TargetScope } from '../screens/index.js'
import type { CapArea } from './capXml.js'
import type { GeoMatcher } from './geo.js'

export class ScreenGeo implements GeoMatcher {
  constructor(
    readonly db: Database,
    readonly nodes: NodeService,
    readonly screens: ScreenRecords,
    readonly groups: GroupConditions,
  ) {}

  async inside(_p: Principal, _target: TargetScope, _areas: CapArea[]): Promise<string[]> {
    return []
  }
}
