// Alerts: rules per workspace, their evaluation from the device link (status, panel power,
// storage, play-log limits) and their notifications (mail, webhooks, channels).
import { domainModule } from '../../platform/provisions.js'
import { AlertEvaluator } from './AlertEvaluator.js'
import { AlertNotifier } from './AlertNotifier.js'
import { AlertRuleService } from './AlertRuleService.js'
import { AlertWorker } from './AlertWorker.js'

export { default as alertRoutes } from './alertRoutes.js'

export const alertsModule = domainModule({
  name: 'alerts',
  needs: [
    'db',
    'clock',
    'ids',
    'random',
    'config',
    'log',
    'outbound',
    'leases',
    'running',
    'nodes',
    'nodeUsage',
    'users',
    'screens',
    'mailer',
    'screenStatuses',
    'screenReports',
    'playLogLimits',
    'drift',
    'groups',
    'groupUsage',
  ],
  provides: ['alertRules', 'alerts', 'alertWorker'],
  create: ({
    db,
    clock,
    ids,
    random,
    config,
    log,
    outbound,
    leases,
    running,
    nodes,
    nodeUsage,
    users,
    screens,
    mailer,
    screenStatuses,
    screenReports,
    playLogLimits,
    drift,
    groups,
    groupUsage,
  }) => {
    const alertRules = new AlertRuleService(db, clock, ids, nodes, screens, groups, outbound, random)
    nodeUsage.add(async (ws, nodeId) => ({ what: 'alert rule(s) homed or scoped there', count: await alertRules.countAtNode(ws, nodeId) }))
    groupUsage.add(async (ws, groupId) => ({ what: 'alert rule(s) scoped to it', count: await alertRules.countAtNode(ws, groupId) }))
    const alerts = new AlertEvaluator(db, clock, ids, nodes, alertRules, new AlertNotifier(users, clock, outbound, mailer, log), groups)
    // The device link feeds the evaluator: presence changes (as the outbox dispatches them)
    // and reported panel and storage state; the play log its limited screens.
    screenStatuses.add((changes) =>
      alerts.screensStatusChanged(
        changes.map((c) => ({
          workspaceId: c.workspaceId,
          screen: { id: c.screenId, name: c.screenName, nodeId: c.nodeId },
          status: c.status,
          at: c.status === 'offline' ? (c.since ?? c.at) : c.at,
        })),
      ),
    )
    screenReports.add(async (r) => {
      const screen = { id: r.screenId, nodeId: r.nodeId }
      // A panel off during its operating hours' off time is off on purpose: no display-off.
      const shouldShow = r.reported.playing.source !== 'none' && r.reported.panel?.intended !== 'off'
      if (r.reported.panel) await alerts.panelPowerReported(r.workspaceId, screen, r.reported.panel.power, shouldShow, r.at)
      if (r.reported.panel) await alerts.panelObeyingReported(r.workspaceId, screen, r.reported.panel, r.at)
      if (r.reported.storage) await alerts.storageReported(r.workspaceId, screen, r.reported.storage.usedBytes, r.reported.storage.totalBytes, r.at)
    })
    playLogLimits.add({
      limited: (e) => alerts.playLogLimited(e),
      recovered: (ws, screenId, at) => alerts.playLogRecovered(ws, screenId, at),
    })
    // A screen no longer drifting closes its drift events.
    drift.changes.add((c) => (c.state !== 'drifting' ? alerts.driftEnded(c.workspaceId, c.screenId, c.state, c.since) : undefined))
    // Time-based triggers (connection lost) are checked on one instance of the cloud at a time.
    const alertWorker = new AlertWorker(alerts, drift, config.alertIntervalMs, log).oncePerCloud(leases, 'alerts')
    running.add('alert worker', alertWorker)
    return { alertRules, alerts, alertWorker }
  },
})
