// Measures the platform every SVC_STATUS_INTERVAL_MS and prunes old measurements.
import type { StatusService } from './StatusService.js'
import { IntervalWorker } from '../../platform/workers/Worker.js'

export class StatusMonitor extends IntervalWorker {
  constructor(
    private readonly status: StatusService,
    intervalMs: number,
    log: { error(obj: unknown, msg: string): void },
  ) {
    super(intervalMs, log)
  }
  protected async tick(): Promise<void> {
    await this.status.measure()
    await this.status.prune()
  }
}
