// CAP feeds: emergencies started, updated and cleared by Common Alerting Protocol 1.2 alerts,
// pushed to the cloud or pulled by it. Its worker (expiry and pull fetches) is built here,
// added to `running`: started once every module is wired, stopped with the rest.
import { domainModule } from '../../platform/provisions.js'
import { CapService } from './CapService.js'
import { CapWorker } from './CapWorker.js'
import { ScreenGeo } from './ScreenGeo.js'

export { default as capRoutes } from './capRoutes.js'

export const capModule = domainModule({
  name: 'cap',
  needs: ['db', 'clock', 'ids', 'random', 'config', 'log', 'outbound', 'running', 'nodes', 'emergencies', 'screenRecords', 'groups'],
  provides: ['capFeeds', 'capWorker'],
  create: ({ db, clock, ids, random, config, log, outbound, running, nodes, emergencies, screenRecords, groups }) => {
    const capFeeds = new CapService(db, clock, ids, random, nodes, emergencies, outbound, new ScreenGeo(nodes, screenRecords, groups))
    const capWorker = new CapWorker(capFeeds, config.capIntervalMs, log)
    running.add('cap feeds', capWorker)
    return { capFeeds, capWorker }
  },
})
