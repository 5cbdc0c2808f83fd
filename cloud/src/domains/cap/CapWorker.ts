// The CAP feeds' background work, every SVC_CAP_INTERVAL_MS on every instance: handles again
// the documents whose handling was interrupted (left `received` past their lease: the instance
// died; one instance takes each over), clears the emergencies whose alerts have expired (a
// conditional update: one instance wins each), then fetches the pull feeds that are due (each
// claimed by one instance through its next fetch time).
import { IntervalWorker } from '../../platform/workers/Worker.js'
import type { CapService } from './CapService.js'

export class CapWorker extends IntervalWorker {
  constructor(
    private readonly feeds: CapService,
    intervalMs: number,
    private readonly logger: { error(obj: unknown, msg: string): void; warn(obj: unknown, msg: string): void },
  ) {
    super(intervalMs, logger)
  }

  protected async tick(): Promise<void> {
    try {
      await this.feeds.recoverStuck()
    } catch (err) {
      this.logger.error({ err }, 'recovering interrupted CAP alerts failed')
    }
    try {
      await this.feeds.expireDue()
    } catch (err) {
      this.logger.error({ err }, 'expiring CAP alerts failed')
    }
    await this.feeds.pullDue(this.logger)
  }
}
