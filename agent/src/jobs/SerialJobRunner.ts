// The seam between the job dispatcher and the serial driver (agent/src/serial/, built
// separately): one serial job in, one JobResult out. The runner owns the port (one command
// in flight, timeouts, retries, reopening after an unplug) and never throws for a panel
// fault: those are outcomes (`nak`, `timeout`, `failed` with a reason).
import type { JobResult, SerialJob } from '@svc/shared/mqtt/index'
import type { Clock } from '../runtime/time.js'

export interface SerialJobRunner {
  run(job: SerialJob): Promise<JobResult>
  start?(): Promise<void> | void
  stop?(): Promise<void> | void
}

/**
 * Answers every serial job `failed` with a reason: used when no port is configured
 * (`--serial` absent), or while the real driver is not wired in.
 */
export class UnavailableSerialRunner implements SerialJobRunner {
  constructor(
    private readonly clock: Clock,
    private readonly reason = 'no serial port configured',
  ) {}

  async run(job: SerialJob): Promise<JobResult> {
    return { jobId: job.id, kind: 'serial', sentHex: '', replyHex: '', outcome: 'failed', reason: this.reason, at: this.clock.now().toISOString() }
  }
}
