// Delivery of screenshot jobs through the embedded broker: the generic JobDelivery over the
// screenshot jobs table (see JobDelivery.ts for when jobs go out). The PNG comes back over
// HTTP (the job's `uploadUrl`); a `job-results` message of kind `screenshot` closes a job
// the agent could not do.
import type { Logger } from '@svc/shared'
import type { ScreenshotJob } from '@svc/shared/mqtt/index'
import type { EmbeddedBroker } from '../../platform/broker/EmbeddedBroker.js'
import { JobDelivery } from '../devicelink/index.js'
import type { ScreenshotService } from './ScreenshotService.js'

export class ScreenshotJobDelivery extends JobDelivery<ScreenshotJob> {
  constructor(broker: EmbeddedBroker, shots: ScreenshotService, log: Pick<Logger, 'warn' | 'error'>) {
    super(broker, shots, log, { kind: 'screenshot' })
  }
}
