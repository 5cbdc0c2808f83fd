// Drift: whether each screen does what it was told, judged when it reports, comes online or
// goes offline, and by the periodic check (the alert worker's tick runs drift.sweep()).
import { domainModule } from '../../platform/provisions.js'
import { DriftService } from './DriftService.js'

export const driftModule = domainModule({
  name: 'drift',
  needs: [
    'db',
    'clock',
    'log',
    'config',
    'screenRecords',
    'desiredState',
    'desiredPublisher',
    'serialJobs',
    'outbox',
    'screenReports',
    'screenStatuses',
    'stopSteps',
    'agentRollouts',
  ],
  provides: ['drift'],
  create: (d) => {
    const drift = new DriftService(
      d.db,
      d.screenRecords,
      d.desiredState,
      d.serialJobs,
      d.outbox,
      d.clock,
      d.log,
      d.config.driftGraceMs,
      d.desiredPublisher.window,
      d.agentRollouts,
    )
    d.screenReports.add((r) => drift.queue(r.workspaceId, r.screenId))
    d.screenStatuses.add((changes) => {
      for (const c of changes) drift.queue(c.workspaceId, c.screenId)
    })
    // Judgements in flight are stored before the database closes.
    d.stopSteps.add('drift judgements', () => drift.idle())
    return { drift }
  },
})
