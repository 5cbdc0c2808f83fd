// Reports: availability (presence intervals, the panel's history, operating hours) over a
// window per screen, location or group, as JSON or CSV; its hourly roll-up; reports mailed
// weekly or monthly (subscriptions). Both workers run on one instance (work leases).
import { domainModule } from '../../platform/provisions.js'
import { AvailabilityRollup } from './AvailabilityRollup.js'
import { AvailabilityService } from './AvailabilityService.js'
import { PanelHistory } from './PanelHistory.js'
import { ReportSubscriptionWorker, ReportSubscriptions } from './ReportSubscriptions.js'
import { ReportsRepository } from './ReportsRepository.js'

export { default as reportRoutes } from './reportRoutes.js'

/** History older than this many days is forgotten (a report's window is at most 366 days). */
export const HISTORY_DAYS = 400

export const reportsModule = domainModule({
  name: 'reports',
  needs: [
    'db',
    'clock',
    'log',
    'housekeeping',
    'nodes',
    'groups',
    'operatingHoursRecords',
    'screenReports',
    'running',
    'leases',
    'config',
    'ids',
    'mailer',
    'playLog',
  ],
  provides: ['availability', 'panelHistory', 'availabilityRollup', 'reportSubscriptions', 'reportSubscriptionWorker'],
  create: ({ db, clock, log, housekeeping, nodes, groups, operatingHoursRecords, screenReports, running, leases, config, ids, mailer, playLog }) => {
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
    const availabilityRollup = new AvailabilityRollup(db, config.reportIntervalMs, log).oncePerCloud(leases, 'availability-rollup')
    running.add('availability roll-up', { start: () => availabilityRollup.start(), stop: () => availabilityRollup.stop() })
    const reportSubscriptions = new ReportSubscriptions(db, clock, ids, nodes, availability, playLog, mailer, log)
    const reportSubscriptionWorker = new ReportSubscriptionWorker(reportSubscriptions, config.reportIntervalMs, log).oncePerCloud(
      leases,
      'report-subscriptions',
    )
    running.add('report subscriptions', { start: () => reportSubscriptionWorker.start(), stop: () => reportSubscriptionWorker.stop() })
    return { availability, panelHistory, availabilityRollup, reportSubscriptions, reportSubscriptionWorker }
  },
})
