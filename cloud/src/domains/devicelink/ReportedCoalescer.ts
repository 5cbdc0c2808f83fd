// `reported` messages coalesced per screen, the latest wins: a message only replaces the
// screen's pending one (no parsing, no database), and a screen's state is written at once
// when it is idle, then at most once per `minIntervalMs` while messages keep coming. So
// the database sees a few writes per screen per second whatever a device sends, and a busy
// screen's writes never queue in front of another screen's presence.

export class ReportedCoalescer<T> {
  private readonly pending = new Map<string, T>()
  private readonly scheduled = new Map<string, NodeJS.Timeout | 'running'>()
  private readonly lastWrite = new Map<string, number>()
  private inFlight = 0
  private idleWaiters: (() => void)[] = []

  constructor(
    private readonly write: (screenId: string, item: T) => Promise<void>,
    readonly minIntervalMs = 250,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Keeps `item` as the screen's latest and makes sure a write of it is coming. */
  offer(screenId: string, item: T): void {
    this.pending.set(screenId, item)
    if (!this.scheduled.has(screenId)) this.schedule(screenId)
  }

  /** Resolves when nothing is pending or being written. */
  idle(): Promise<void> {
    if (this.pending.size === 0 && this.inFlight === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /** Cancels the waits; what is pending is written now. */
  async flushAll(): Promise<void> {
    for (const [id, t] of this.scheduled) if (t !== 'running') clearTimeout(t), this.scheduled.delete(id)
    await Promise.all([...this.pending.keys()].filter((id) => !this.scheduled.has(id)).map((id) => this.run(id)))
    await this.idle()
  }

  private schedule(screenId: string): void {
    const wait = Math.max(0, (this.lastWrite.get(screenId) ?? -Infinity) + this.minIntervalMs - this.now())
    const timer = setTimeout(() => void this.run(screenId), wait)
    this.scheduled.set(screenId, timer)
  }

  private async run(screenId: string): Promise<void> {
    const item = this.pending.get(screenId)
    this.pending.delete(screenId)
    if (item === undefined) {
      this.scheduled.delete(screenId)
      return this.settle()
    }
    this.scheduled.set(screenId, 'running')
    this.inFlight++
    this.lastWrite.set(screenId, this.now())
    try {
      await this.write(screenId, item)
    } finally {
      this.inFlight--
      this.scheduled.delete(screenId)
      if (this.pending.has(screenId)) this.schedule(screenId)
      this.settle()
    }
  }

  private settle(): void {
    if (this.pending.size > 0 || this.inFlight > 0) return
    const w = this.idleWaiters
    this.idleWaiters = []
    for (const r of w) r()
  }
}
