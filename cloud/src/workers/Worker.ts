// A background job run on an interval: start() schedules, stop() cancels and waits for
// a run in progress, runOnce() lets tests drive it without timers.
export abstract class IntervalWorker {
  private timer: NodeJS.Timeout | null = null
  private running: Promise<void> | null = null

  constructor(
    protected readonly intervalMs: number,
    protected readonly log: { error(obj: unknown, msg: string): void },
  ) {}

  protected abstract tick(): Promise<void>

  async runOnce(): Promise<void> {
    if (this.running) return this.running
    this.running = this.tick().finally(() => (this.running = null))
    return this.running
  }

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return
    this.timer = setInterval(() => {
      this.runOnce().catch((err) => this.log.error({ err }, `${this.constructor.name} failed`))
    }, this.intervalMs)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    if (this.running) await this.running.catch(() => undefined)
  }
}
