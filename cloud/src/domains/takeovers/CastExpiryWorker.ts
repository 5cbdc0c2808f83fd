// Ends casts at their expiresAt (status `expired`) and republishes their screens. An
// interval sweep catches anything missed (a restart, a clock jump); a precise timer set
// to the earliest expiresAt ends each cast on time. The agent also drops expired casts
// on its own clock, so an offline screen stops the cast at the right moment anyway.
// Each tick also records the reach of emergencies whose window has passed (`also`).
import type { Clock } from '../../platform/clock.js'
import type { CastService } from './CastService.js'
import { IntervalWorker } from '../../platform/workers/Worker.js'

const MAX_TIMER_MS = 2_147_483_647

export class CastExpiryWorker extends IntervalWorker {
  private precise: NodeJS.Timeout | null = null
  private started = false

  constructor(
    private readonly casts: CastService,
    private readonly clock: Clock,
    intervalMs: number,
    log: { error(obj: unknown, msg: string): void },
    private readonly also: () => Promise<unknown> = async () => undefined,
  ) {
    super(intervalMs, log)
    casts.onChange(() => void this.arm())
  }

  protected async tick(): Promise<void> {
    await this.casts.expireDue()
    await this.arm()
    await this.also()
  }

  override start(): void {
    super.start()
    if (this.intervalMs <= 0) return
    this.started = true
    void this.runOnce().catch((err) => this.log.error({ err }, 'cast expiry failed'))
  }

  override async stop(): Promise<void> {
    this.started = false
    if (this.precise) clearTimeout(this.precise)
    this.precise = null
    await super.stop()
  }

  private async arm(): Promise<void> {
    if (!this.started) return
    const next = await this.casts.nextExpiry().catch(() => null)
    if (this.precise) clearTimeout(this.precise)
    this.precise = null
    if (!next || !this.started) return
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, Date.parse(next) - this.clock.now().getTime()))
    this.precise = setTimeout(() => void this.runOnce().catch((err) => this.log.error({ err }, 'cast expiry failed')), delay)
    this.precise.unref()
  }
}
