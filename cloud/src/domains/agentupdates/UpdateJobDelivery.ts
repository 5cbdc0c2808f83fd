// Delivery of `update` jobs through the embedded broker: the generic JobDelivery over the
// rollouts' screens (see JobDelivery.ts for when jobs go out). A job goes out until the
// device acknowledges it, never after: a player that went back to its previous version
// must not be handed the release again. Its result (kind `update`) comes from the new
// version once it connected and reported, or from the previous one after it went back.
import type { Logger } from '@svc/shared'
import type { UpdateJob } from '@svc/shared/mqtt/index'
import type { EmbeddedBroker } from '../../platform/broker/EmbeddedBroker.js'
import { JobDelivery } from '../devicelink/index.js'
import type { AgentRolloutService } from './AgentRolloutService.js'

export class UpdateJobDelivery extends JobDelivery<UpdateJob> {
  constructor(broker: EmbeddedBroker, rollouts: AgentRolloutService, log: Pick<Logger, 'warn' | 'error'>) {
    super(broker, rollouts, log, { kind: 'update' })
  }
}
