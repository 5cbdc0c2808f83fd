// Screens and pairing: the screen records, device registration and pairing codes, panel
// profiles; and the screens' assignments, which republish the screens showing an item when it changes.
import { Listeners } from '../../platform/hooks.js'
import { domainModule } from '../../platform/provisions.js'
import { AssignmentService } from './AssignmentService.js'
import { PairingService } from './PairingService.js'
import { ScreenRepository } from './ScreenRepository.js'
import { ScreenPanelService } from './ScreenPanelService.js'
import { ScreenService } from './ScreenService.js'

export { default as screenRoutes } from './screenRoutes.js'
export { default as deviceRoutes } from './deviceRoutes.js'

export const screensModule = domainModule({
  name: 'screens',
  needs: ['db', 'clock', 'ids', 'random', 'config', 'broker', 'dataChanges', 'housekeeping', 'metrics', 'nodes', 'nodeUsage'],
  provides: ['screens', 'screenRecords', 'screenChanges', 'pairing', 'screenPanels'],
  create: ({ db, clock, ids, random, config, broker, dataChanges, housekeeping, metrics, nodes, nodeUsage }) => {
    const screenChanges = new Listeners<(workspaceId: string, screenId: string) => void>()
    const screens = new ScreenService(db, clock, ids, nodes, (screenId) => broker.disconnect(screenId), config.screenListKeepMs, dataChanges, screenChanges)
    nodeUsage.add(async (ws, nodeId) => ({ what: 'screen(s)', count: await screens.countAtNode(ws, nodeId) }))
    const pairing = new PairingService(db, clock, ids, nodes, screens, random)
    housekeeping.add({ name: 'pairing registrations', run: () => pairing.purgeExpired() })
    // Other domains read (and the device link bumps the desired version of) screens through these methods.
    const screenRecords = new ScreenRepository(db.kysely)
    metrics.cloudGauge(
      'svc_screens',
      'Paired screens by status (online, offline).',
      async () => (await screenRecords.countByStatus()).map(([status, n]) => [{ status }, n] as const),
      ['status'],
    )
    return { screens, screenRecords, screenChanges, pairing, screenPanels: new ScreenPanelService(db, clock, screens) }
  },
})

/** Assignments: after the device link, whose `markDirty` republishes the screens they change. */
export const assignmentsModule = domainModule({
  name: 'assignments',
  needs: ['db', 'clock', 'log', 'nodes', 'content', 'contentResolver', 'markDirty', 'contentUsage', 'contentChanges', 'groups'],
  provides: ['assignments'],
  create: ({ db, clock, log, nodes, content, contentResolver, markDirty, contentUsage, contentChanges, groups }) => ({
    assignments: new AssignmentService(
      db,
      clock,
      nodes,
      contentResolver,
      markDirty,
      log,
      { library: content, usage: contentUsage, changes: contentChanges },
      groups,
    ),
  }),
})
