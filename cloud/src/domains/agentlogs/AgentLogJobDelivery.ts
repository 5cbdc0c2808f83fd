// Delivery of `logs` jobs through the embedded broker: the generic JobDelivery over the
// agent_logs table (see JobDelivery.ts for when jobs go out). The lines come back over HTTP
// (the job's `uploadUrl`); a `job-results` message of kind `logs` closes a request the
// agent could not answer.
import type { Logger } from '@svc/shared'
import type { LogsJob } from '@svc/shared/mqtt/index'
import type { EmbeddedBroker } from '../../platform/broker/EmbeddedBroker.js'
import { JobDelivery } from '../devicelink/index.js'
import type { AgentLogService } from './AgentLogService.js'

export class AgentLogJobDelivery extends JobDelivery<LogsJob> {
  constructor(broker: EmbeddedBroker, logs: AgentLogService, log: Pick<Logger, 'warn' | 'error'>) {
    super(broker, logs, log, { kind: 'logs' })
  }
}
