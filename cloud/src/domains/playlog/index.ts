// Proof of play: batches from devices (stored before their PUBACK), bounded per screen and
// per workspace, read and exported as CSV.
import { Listeners } from '../../platform/hooks.js'
import { defineModule } from '../../platform/modules.js'
import type { DomainProvisions as D, PlatformProvisions as P } from '../provisions.js'
import { RedisDailyCounter } from './PlayLogLimits.js'
import { type PlayLogLimitSink, PlayLogService } from './PlayLogService.js'

export { default as playLogRoutes } from './playLogRoutes.js'

type Needs = Pick<P, 'db' | 'clock' | 'config' | 'log' | 'timers' | 'redis' | 'devicePolicy' | 'stopSteps' | 'housekeeping'> & Pick<D, 'screens'>

export const playLogModule = defineModule<Needs, Pick<D, 'playLog' | 'playLogLimits'>>({
  name: 'playlog',
  needs: { db: true, clock: true, config: true, log: true, timers: true, redis: true, devicePolicy: true, stopSteps: true, housekeeping: true, screens: true },
  provides: { playLog: true, playLogLimits: true },
  create: ({ db, clock, config, log, timers, redis, devicePolicy, stopSteps, housekeeping, screens }) => {
    const playLogLimits = new Listeners<PlayLogLimitSink>()
    const playLog = new PlayLogService(
      db,
      clock,
      screens,
      {
        retentionDays: config.playLogRetentionDays,
        screenRate: config.playLogScreenRate,
        screenBurst: config.playLogScreenBurst,
        dailyPerZone: config.playLogDailyPerZone,
      },
      { timers, counter: redis ? new RedisDailyCounter(redis) : undefined, log },
      playLogLimits,
    )
    // Batches published on the device link are stored before their PUBACK.
    devicePolicy.setPlayLogSink((screenId, payload) => playLog.ingest(screenId, payload))
    stopSteps.add('play log', () => {
      devicePolicy.setPlayLogSink(null)
      playLog.close()
    })
    housekeeping.add({ name: 'old plays', run: () => playLog.purgeOld() })
    return { playLog, playLogLimits }
  },
})
