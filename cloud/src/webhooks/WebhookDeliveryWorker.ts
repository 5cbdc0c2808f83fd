// Sends due webhook deliveries: claims a batch under a lease (one statement), sends them
// concurrently (bounded per endpoint), writes the outcomes in one transaction, and repeats
// while batches come back full; purges the 30-day log once an hour. Runs on a
// short interval and is also kicked right after an event queued deliveries.
import type { Clock } from '../clock.js'
import { IntervalWorker } from '../workers/Worker.js'
import type { WebhookService } from './WebhookService.js'

export class WebhookDeliveryWorker extends IntervalWorker {
  private lastPurge = 0
  private kickAgain = false
  private kickLoop: Promise<void> | null = null
  private stopped = false

  constructor(
    private readonly webhooks: WebhookService,
    private readonly clock: Clock,
    intervalMs: number,
    log: { error(obj: unknown, msg: string): void },
    private readonly batchSize = 200,
    /** Runs first on every run: the event outbox's dispatch, so events a killed process left behind become deliveries. */
    private readonly beforeRun: () => Promise<unknown> = async () => undefined,
  ) {
    super(intervalMs, log)
  }

  /** Runs soon without waiting for the interval (no-op when the worker is driven by hand). */
  kick(): void {
    if (this.intervalMs <= 0 || this.stopped) return
    this.kickAgain = true
    if (this.kickLoop) return
    this.kickLoop = (async () => {
      while (this.kickAgain && !this.stopped) {
        this.kickAgain = false
        await this.runOnce().catch((err) => this.log.error({ err }, 'webhook delivery run failed'))
      }
    })().finally(() => (this.kickLoop = null))
  }

  protected async tick(): Promise<void> {
    await this.beforeRun()
    const now = this.clock.now().getTime()
    if (now - this.lastPurge >= 3600_000) {
      await this.webhooks.purge()
      this.lastPurge = now
    }
    for (let round = 0; round < 20; round++) {
      const batch = await this.webhooks.claimDue(this.batchSize)
      if (!batch.length) return
      await this.webhooks.attemptMany(batch).catch((err) => this.log.error({ err, deliveries: batch.length }, 'webhook attempts failed'))
      if (batch.length < this.batchSize) return
    }
  }

  override start(): void {
    this.stopped = false
    super.start()
  }

  override async stop(): Promise<void> {
    this.stopped = true
    await super.stop()
    if (this.kickLoop) await this.kickLoop
  }
}
