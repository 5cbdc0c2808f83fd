// Operating hours: when locations' and screens' panels should be on. The records (effective
// hours) are built before the device link, whose desired states carry them; the service and
// routes after it, since a change republishes the screens it reaches.
import { domainModule } from '../../platform/provisions.js'
import { OperatingHoursRecords } from './OperatingHoursRecords.js'
import { OperatingHoursService } from './OperatingHoursService.js'

export { default as hoursRoutes } from './hoursRoutes.js'

export const hoursRecordsModule = domainModule({
  name: 'operating hours records',
  needs: ['db', 'nodes'],
  provides: ['operatingHoursRecords'],
  create: ({ db, nodes }) => ({ operatingHoursRecords: new OperatingHoursRecords(db, nodes) }),
})

export const hoursModule = domainModule({
  name: 'operating hours',
  needs: ['db', 'clock', 'nodes', 'screens', 'screenRecords', 'operatingHoursRecords', 'markDirty'],
  provides: ['operatingHours'],
  create: (d) => ({ operatingHours: new OperatingHoursService(d.db, d.clock, d.nodes, d.screens, d.screenRecords, d.operatingHoursRecords, d.markDirty) }),
})
