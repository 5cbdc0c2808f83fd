// Screens and pairing: the screen records, device registration and pairing codes, panel profiles.
import { Listeners } from '../../platform/hooks.js'
import { domainModule } from '../provisions.js'
import { PairingService } from './PairingService.js'
import { ScreenPanelService } from './ScreenPanelService.js'
import { ScreenService } from './ScreenService.js'

export { default as screenRoutes } from './screenRoutes.js'
export { default as deviceRoutes } from './deviceRoutes.js'
export { screenDirectory } from './ScreenService.js'
export { PANEL_MAX_POLL_SECONDS } from './ScreenPanelService.js'

export const screensModule = domainModule({
  name: 'screens',
  needs: ['db', 'clock', 'ids', 'random', 'config', 'broker', 'dataChanges', 'housekeeping', 'nodes', 'nodeUsage'],
  provides: ['screens', 'screenChanges', 'pairing', 'screenPanels'],
  create: ({ db, clock, ids, random, config, broker, dataChanges, housekeeping, nodes, nodeUsage }) => {
    const screenChanges = new Listeners<(workspaceId: string, screenId: string) => void>()
    const screens = new ScreenService(db, clock, ids, nodes, (screenId) => broker.disconnect(screenId), config.screenListKeepMs, dataChanges, screenChanges)
    nodeUsage.add(async (ws, nodeId) => ({ what: 'screen(s)', count: await screens.countAtNode(ws, nodeId) }))
    const pairing = new PairingService(db, clock, ids, nodes, screens, random)
    housekeeping.add({ name: 'pairing registrations', run: () => pairing.purgeExpired() })
    return { screens, screenChanges, pairing, screenPanels: new ScreenPanelService(db, clock, screens) }
  },
})
