// Reports: availability (presence intervals, the panel's history, operating hours) over a
// window per screen, location or group, as JSON or CSV.
import { domainModule } from '../../platform/provisions.js'
import { AvailabilityRollup } from './AvailabilityRollup.js'
import { AvailabilityService } from './AvailabilityService.js'
import { PanelHistory } from './PanelHistory.js'
import { ReportsRepository } from './ReportsRepository.js'

export { default as reportRoutes } from './reportRoutes.js'

/** History older than this many days is forgotten (a report's window is at most 366 days). */
export const HISTORY_DAYS = 400

export const reportsModule = domainModule({
  name: 'reports',
  needs: ['db', 'clock', 'log', 'housekeeping', 'nodes', 'groups', 'operatingHoursRecords', 'screenReports', 'running', 'leases', 'config'],
  provides: ['availability', 'panelHistory', 'availabilityRollup'],
  create: ({ db, clock, log, housekeeping, nodes, groups, operatingHoursRecords, screenReports, running, leases, config }) => {
    const availability = new AvailabilityService(db, clock, nodes, groups, operatingHoursRecords)
    const panelHistory = new PanelHistory(db, log)
    screenReports.add((r) => panelHistory.record(r))
    // Reports are recorded in batches after they are heard: a stop waits for the last one.
    running.add('panel history', { start: () => undefined, stop: () => panelHistory.idle() })
    const repo = new ReportsRepository(db.kysely)
    housekeeping.add({
      name: 'old availability history',
      run: () => repo.purge(new Date(clock.now().getTime() - HISTORY_DAYS * 86_400_000).toISOString()),
    })
    const availabilityRollup = new AvailabilityRollup(db, config.reportRollupIntervalMs, log).oncePerCloud(leases, 'availability-rollup')
    running.add('availability roll-up', { start: () => availabilityRollup.start(), stop: () => availabilityRollup.stop() })
    return { availability, panelHistory, availabilityRollup }
  },
})
