// Hourly clean-up of expired rows (idempotency keys older than 24 h).
import type { IdempotencyStore } from '../http/idempotency.js'
import { IntervalWorker } from './Worker.js'

export class Housekeeper extends IntervalWorker {
  constructor(
    private readonly idempotency: IdempotencyStore,
    intervalMs: number,
    log: { error(obj: unknown, msg: string): void },
  ) {
    super(intervalMs, log)
  }
  protected async tick(): Promise<void> {
    await this.idempotency.purgeExpired()
  }
}
