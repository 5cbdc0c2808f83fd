// A sweep that callers arriving together share. Every connecting device's job re-send asked
// for the expiry sweep (one UPDATE over the whole jobs table) before reading its own jobs,
// so a connect storm of 5,000 devices queued 10,000 such writes on the database. A sweep
// that started at most `reuseMs` ago by the service's clock is awaited instead of run again:
// it failed what was past its TTL then, and the callers read their jobs with the TTL cutoff,
// so a job that crossed its TTL since is left out all the same (and failed by the next sweep).
export class SharedSweep {
  private last: { at: number; run: Promise<unknown> } | null = null

  constructor(
    private readonly clock: { now(): Date },
    private readonly sweep: () => Promise<unknown>,
    readonly reuseMs = 200,
  ) {}

  run(): Promise<unknown> {
    const at = this.clock.now().getTime()
    if (this.last && at >= this.last.at && at - this.last.at < this.reuseMs) return this.last.run
    const run = this.sweep()
    const entry = { at, run }
    this.last = entry
    // A failed sweep is not shared: the next caller runs its own.
    run.catch(() => {
      if (this.last === entry) this.last = null
    })
    return run
  }
}
