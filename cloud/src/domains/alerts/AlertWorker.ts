// Periodic alert check for time-based triggers (connection-lost: offline longer than the
// rule's threshold), since no device report arrives while a screen is away.
import { IntervalWorker } from '../../platform/workers/Worker.js'
import type { AlertEvaluator } from './AlertEvaluator.js'

export class AlertWorker extends IntervalWorker {
  constructor(
    private readonly evaluator: AlertEvaluator,
    intervalMs: number,
    log: { error(obj: unknown, msg: string): void },
  ) {
    super(intervalMs, log)
  }

  protected async tick(): Promise<void> {
    await this.evaluator.checkConnectionLost()
  }

  override async stop(): Promise<void> {
    await super.stop()
    await this.evaluator.notifier.settled()
  }
}
