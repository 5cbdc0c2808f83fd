// Proof of play: batches from devices (stored before their PUBACK), bounded per screen and
// per workspace, read and exported as CSV.
import { Listeners } from '../../platform/hooks.js'
import { domainModule } from '../../platform/provisions.js'
import { RedisDailyCounter } from './PlayLogLimits.js'
import { type PlayLogLimitSink, PlayLogService } from './PlayLogService.js'

export { default as playLogRoutes } from './playLogRoutes.js'

export const playLogModule = domainModule({
  name: 'playlog',
  needs: ['db', 'clock', 'config', 'log', 'timers', 'redis', 'devicePolicy', 'stopSteps', 'housekeeping', 'screens', 'content', 'nodes', 'groups'],
  provides: ['playLog', 'playLogLimits'],
  create: ({ db, clock, config, log, timers, redis, devicePolicy, stopSteps, housekeeping, screens, content, nodes, groups }) => {
    const playLogLimits = new Listeners<PlayLogLimitSink>()
    const playLog = new PlayLogService(
      db,
      clock,
      screens,
      content,
      nodes,
      {
        retentionDays: config.playLogRetentionDays,
        screenRate: config.playLogScreenRate,
        screenBurst: config.playLogScreenBurst,
        dailyPerZone: config.playLogDailyPerZone,
      },
      { timers, counter: redis ? new RedisDailyCounter(redis) : undefined, log, groups },
      playLogLimits,
    )
    // Batches published on the device link are stored before their PUBACK.
    const leave = devicePolicy.playLogBatches.add((screenId, payload) => playLog.ingest(screenId, payload))
    stopSteps.add('play log', () => {
      leave()
      playLog.close()
    })
    housekeeping.add({ name: 'old plays', run: () => playLog.purgeOld() })
    return { playLog, playLogLimits }
  },
})
