// Clean-up of rows nobody needs any more, every SVC_HOUSEKEEPING_INTERVAL_MS (hourly by
// default): idempotency keys older than 24 h, abandoned multipart uploads, unclaimed pairing
// registrations a day past expiry, sent mail older than 30 days, expired OAuth tokens, and
// plays (proof of play) past their retention
// (SVC_PLAY_LOG_RETENTION_DAYS). Each task is independent: one failing does not stop the others.
import { IntervalWorker } from './Worker.js'

export type HousekeepingTask = { name: string; run: () => Promise<number> }

export class Housekeeper extends IntervalWorker {
  constructor(
    /** Read at each run: the domains add their tasks while they are wired. */
    private readonly tasks: { all(): readonly HousekeepingTask[] },
    intervalMs: number,
    private readonly logger: { error(obj: unknown, msg: string): void },
  ) {
    super(intervalMs, logger)
  }
  protected async tick(): Promise<void> {
    for (const task of this.tasks.all()) {
      try {
        await task.run()
      } catch (err) {
        this.logger.error({ err, task: task.name }, 'housekeeping task failed')
      }
    }
  }
}
