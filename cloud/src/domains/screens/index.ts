// Screens and pairing: the screen records, device registration and pairing codes, panel profiles.
import { Listeners } from '../../platform/hooks.js'
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { PairingService } from './PairingService.js'
import { ScreenPanelService } from './ScreenPanelService.js'
import { ScreenService } from './ScreenService.js'

export { default as screenRoutes } from './screenRoutes.js'
export { default as deviceRoutes } from './deviceRoutes.js'
export { screenDirectory } from './ScreenService.js'
export { PANEL_MAX_POLL_SECONDS } from './ScreenPanelService.js'

type Needs = Pick<P, 'db' | 'clock' | 'ids' | 'random' | 'config' | 'broker' | 'dataChanges' | 'housekeeping'> & Pick<D, 'nodes' | 'nodeUsage'>

export const screensModule = defineModule<Needs, Pick<D, 'screens' | 'screenChanges' | 'pairing' | 'screenPanels'>>({
  name: 'screens',
  needs: { db: true, clock: true, ids: true, random: true, config: true, broker: true, dataChanges: true, housekeeping: true, nodes: true, nodeUsage: true },
  provides: { screens: true, screenChanges: true, pairing: true, screenPanels: true },
  create: ({ db, clock, ids, random, config, broker, dataChanges, housekeeping, nodes, nodeUsage }) => {
    const screenChanges = new Listeners<(workspaceId: string, screenId: string) => void>()
    const screens = new ScreenService(db, clock, ids, nodes, (screenId) => broker.disconnect(screenId), config.screenListKeepMs, dataChanges, screenChanges)
    nodeUsage.add(async (ws, nodeId) => ({ what: 'screen(s)', count: await screens.countAtNode(ws, nodeId) }))
    const pairing = new PairingService(db, clock, ids, nodes, screens, random)
    housekeeping.add({ name: 'pairing registrations', run: () => pairing.purgeExpired() })
    return { screens, screenChanges, pairing, screenPanels: new ScreenPanelService(db, clock, screens) }
  },
})
