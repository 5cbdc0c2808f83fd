// Alerts: rules per workspace, their evaluation from the device link (status, panel power,
// storage, play-log limits) and their notifications (mail, webhooks, channels).
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { AlertEvaluator } from './AlertEvaluator.js'
import { AlertNotifier } from './AlertNotifier.js'
import { AlertRuleService } from './AlertRuleService.js'
import { AlertWorker } from './AlertWorker.js'

export { default as alertRoutes } from './alertRoutes.js'

type Needs = Pick<P, 'db' | 'clock' | 'ids' | 'random' | 'config' | 'log' | 'outbound'> &
  Pick<D, 'nodes' | 'nodeUsage' | 'screens' | 'mailer' | 'screenStatuses' | 'screenReports' | 'playLogLimits'>

export const alertsModule = defineModule<Needs, Pick<D, 'alertRules' | 'alerts' | 'alertWorker'>>({
  name: 'alerts',
  needs: {
    db: true,
    clock: true,
    ids: true,
    random: true,
    config: true,
    log: true,
    outbound: true,
    nodes: true,
    nodeUsage: true,
    screens: true,
    mailer: true,
    screenStatuses: true,
    screenReports: true,
    playLogLimits: true,
  },
  provides: { alertRules: true, alerts: true, alertWorker: true },
  create: ({ db, clock, ids, random, config, log, outbound, nodes, nodeUsage, screens, mailer, screenStatuses, screenReports, playLogLimits }) => {
    const alertRules = new AlertRuleService(db, clock, ids, nodes, screens, outbound, random)
    nodeUsage.add(async (ws, nodeId) => ({ what: 'alert rule(s) homed or scoped there', count: await alertRules.countAtNode(ws, nodeId) }))
    const alerts = new AlertEvaluator(db, clock, ids, nodes, alertRules, new AlertNotifier(db, clock, outbound, mailer, log))
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
      if (r.reported.panel) await alerts.panelPowerReported(r.workspaceId, screen, r.reported.panel.power, r.reported.playing.source !== 'none', r.at)
      if (r.reported.storage) await alerts.storageReported(r.workspaceId, screen, r.reported.storage.usedBytes, r.reported.storage.totalBytes, r.at)
    })
    playLogLimits.add({
      limited: (e) => alerts.playLogLimited(e),
      recovered: (ws, screenId, at) => alerts.playLogRecovered(ws, screenId, at),
    })
    return { alertRules, alerts, alertWorker: new AlertWorker(alerts, config.alertIntervalMs, log) }
  },
})
