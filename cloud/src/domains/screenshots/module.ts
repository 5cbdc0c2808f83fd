// Screenshots: jobs sent to screens and the PNGs their agents upload.
import { domainModule } from '../../platform/provisions.js'
import { ScreenshotJobDelivery } from './ScreenshotJobDelivery.js'
import { ScreenshotService } from './ScreenshotService.js'

export { default as screenshotRoutes } from './screenshotRoutes.js'

export const screenshotsModule = domainModule({
  name: 'screenshots',
  needs: ['db', 'clock', 'ids', 'config', 'log', 'broker', 'running', 'housekeeping', 'stopSteps', 'screens', 'mediaStore'],
  provides: ['screenshots'],
  create: ({ db, clock, ids, config, log, broker, running, housekeeping, stopSteps, screens, mediaStore }) => {
    const screenshots = new ScreenshotService(db, clock, ids, screens, mediaStore, config.publicUrl)
    // Screenshot jobs reach devices through the broker, like serial jobs.
    running.add('screenshot job delivery', new ScreenshotJobDelivery(broker, screenshots, log))
    housekeeping.add({ name: 'old screenshots', run: () => screenshots.purgeOld() })
    stopSteps.add('screenshot thumbnails', () => screenshots.idle())
    return { screenshots }
  },
})
