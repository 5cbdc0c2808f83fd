// Delivery of serial jobs through the embedded broker: the generic JobDelivery over the
// serial jobs table (see JobDelivery.ts for when jobs go out). Serial results without a
// kind (older agents) are serial ones; invalid results are logged here; open jobs past
// their TTL are failed as `expired` every minute.
import type { Logger } from '@svc/shared'
import type { SerialJob } from '@svc/shared/mqtt/index'
import type { EmbeddedBroker } from '../../platform/broker/EmbeddedBroker.js'
import { JobDelivery } from '../devicelink/index.js'
import type { SerialJobService } from './SerialJobService.js'

export interface SerialJobDeliveryOptions {
  /** How often open jobs past their TTL are failed as `expired`; 0 = never (tests call expire). */
  sweepIntervalMs?: number
}

export class SerialJobDelivery extends JobDelivery<SerialJob> {
  constructor(broker: EmbeddedBroker, jobs: SerialJobService, log: Pick<Logger, 'warn' | 'error'>, opts: SerialJobDeliveryOptions = {}) {
    super(broker, jobs, log, { kind: 'serial', untaggedResults: true, logInvalidResults: true, sweepIntervalMs: opts.sweepIntervalMs ?? 60_000 })
  }
}
