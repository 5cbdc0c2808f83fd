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
  /** Scheduled, with a first measurement right away, so a fresh server does not report `unknown`. */
  override start(): void {
    super.start()
    if (this.intervalMs > 0) void this.runScheduled().catch((err) => this.log.error({ err }, 'first status measurement failed'))
  }

  protected async tick(): Promise<void> {
    await this.status.measure()
    await this.status.prune()
  }
}
