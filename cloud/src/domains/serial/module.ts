// RS232: command templates, presets per panel protocol, and the jobs sent to screens' panels.
import { domainModule } from '../../platform/provisions.js'
import { SerialJobDelivery } from './SerialJobDelivery.js'
import { SerialJobService } from './SerialJobService.js'
import { SerialTemplateService } from './SerialTemplateService.js'

export { default as serialTemplateRoutes } from './serialTemplateRoutes.js'
export { default as serialJobRoutes } from './serialJobRoutes.js'
export { default as serialPresetRoutes } from './serialPresetRoutes.js'

export const serialModule = domainModule({
  name: 'serial',
  needs: ['db', 'clock', 'ids', 'log', 'broker', 'running', 'nodes', 'nodeUsage', 'screens', 'screenRecords', 'screenPanels', 'groups'],
  provides: ['serialTemplates', 'serialJobs'],
  create: ({ db, clock, ids, log, broker, running, nodes, nodeUsage, screens, screenRecords, screenPanels, groups }) => {
    const serialTemplates = new SerialTemplateService(db, clock, ids, nodes)
    nodeUsage.add(async (ws, nodeId) => ({ what: 'serial template(s)', count: await serialTemplates.countAtNode(ws, nodeId) }))
    const serialJobs = new SerialJobService(db, clock, ids, nodes, screens, screenRecords, screenPanels, serialTemplates, groups)
    // Jobs reach devices through the broker; pending ones go out as screens connect.
    running.add('serial job delivery', new SerialJobDelivery(broker, serialJobs, log))
    return { serialTemplates, serialJobs }
  },
})
