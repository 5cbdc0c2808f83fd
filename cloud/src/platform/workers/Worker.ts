// A background job run on an interval: start() schedules, stop() cancels and waits for
// a run in progress, runOnce() lets tests drive it without timers. A worker given a lease
// (oncePerCloud) runs its scheduled ticks only on the instance holding that lease, so
// several instances of one cloud do the work once between them (platform/cluster/WorkLeases.ts).
import type { WorkLeases } from '../cluster/WorkLeases.js'

export abstract class IntervalWorker {
  private timer: NodeJS.Timeout | null = null
  private running: Promise<void> | null = null
  private lease: { leases: WorkLeases; name: string } | null = null
  /** Runs ended on this instance, of them the failed ones, and when the last that succeeded ended (epoch ms; 0 = none yet): the metrics. */
  readonly runStats = { ended: 0, failed: 0, lastOkAt: 0 }

  constructor(
    protected readonly intervalMs: number,
    protected readonly log: { error(obj: unknown, msg: string): void },
  ) {}

  protected abstract tick(): Promise<void>

  /** Scheduled runs happen only where the lease `name` is held. */
  oncePerCloud(leases: WorkLeases, name: string): this {
    this.lease = { leases, name }
    return this
  }

  /** The lease this worker runs under, if any. */
  get leaseName(): string | null {
    return this.lease?.name ?? null
  }

  async runOnce(): Promise<void> {
    if (this.running) return this.running
    this.running = this.tick()
      .then(
        () => {
          this.runStats.ended++
          this.runStats.lastOkAt = Date.now()
        },
        (err: unknown) => {
          this.runStats.ended++
          this.runStats.failed++
          throw err
        },
      )
      .finally(() => (this.running = null))
    return this.running
  }

  /** A timer's run: skipped when another instance holds this worker's lease; true when it ran. */
  async runScheduled(): Promise<boolean> {
    if (this.lease && !(await this.lease.leases.hold(this.lease.name, this.intervalMs))) return false
    await this.runOnce()
    return true
  }

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return
    this.timer = setInterval(() => {
      this.runScheduled().catch((err) => this.log.error({ err }, `${this.constructor.name} failed`))
    }, this.intervalMs)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    const wasScheduled = this.timer !== null
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    if (this.running) await this.running.catch(() => undefined)
    if (wasScheduled && this.lease) await this.lease.leases.release(this.lease.name).catch(() => undefined)
  }
}
