// Screenshots: jobs sent to screens and the PNGs their agents upload.
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { ScreenshotService } from './ScreenshotService.js'

export { default as screenshotRoutes } from './screenshotRoutes.js'

export const screenshotsModule = defineModule<
  Pick<P, 'db' | 'clock' | 'ids' | 'config' | 'housekeeping'> & Pick<D, 'screens' | 'mediaStore'>,
  Pick<D, 'screenshots'>
>({
  name: 'screenshots',
  needs: { db: true, clock: true, ids: true, config: true, housekeeping: true, screens: true, mediaStore: true },
  provides: { screenshots: true },
  create: ({ db, clock, ids, config, housekeeping, screens, mediaStore }) => {
    const screenshots = new ScreenshotService(db, clock, ids, screens, mediaStore, config.publicUrl)
    housekeeping.add({ name: 'old screenshots', run: () => screenshots.purgeOld() })
    return { screenshots }
  },
})
