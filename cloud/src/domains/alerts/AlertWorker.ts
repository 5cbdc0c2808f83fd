// Periodic alert check for time-based triggers (connection-lost: offline longer than the
// rule's threshold; drift: drifting longer than it), since no device report arrives while a
// screen is away. Each tick first sweeps drift (screens that did not answer a new desired state).
import { IntervalWorker } from '../../platform/workers/Worker.js'
import type { DriftService } from '../drift/index.js'
import type { AlertEvaluator } from './AlertEvaluator.js'

export class AlertWorker extends IntervalWorker {
  constructor(
    private readonly evaluator: AlertEvaluator,
    private readonly drift: Pick<DriftService, 'sweep' | 'drifting'>,
    intervalMs: number,
    log: { error(obj: unknown, msg: string): void },
  ) {
    super(intervalMs, log)
  }

  protected async tick(): Promise<void> {
    await this.drift.sweep()
    await this.evaluator.checkConnectionLost()
    await this.evaluator.checkDrift(await this.drift.drifting())
  }

  override async stop(): Promise<void> {
    await super.stop()
    await this.evaluator.notifier.settled()
  }
}
