// While desired states are being published (a batch is out), the database's one SQLite
// connection should serve the publisher's reads and version bumps first: every statement
// queued in front of them delays the rest of the fan-out. Background writes that can wait a
// moment (stored `reported` states, `applied` marks) ask clear() before they take the
// connection, and run once the batch is done; they wait at most `maxHoldMs`, so a stream of
// batches (devices resubscribing after a restart) never starves them. What waited is then
// written together, in fewer and larger transactions.

export class FanOutWindow {
  private open = 0
  private waiters: (() => void)[] = []

  constructor(readonly maxHoldMs = 2000) {}

  /** A batch goes out; the returned function ends it (calling it twice is harmless). */
  begin(): () => void {
    this.open++
    let ended = false
    return () => {
      if (ended) return
      ended = true
      if (--this.open === 0) this.release()
    }
  }

  /** True while a batch is out. */
  get busy(): boolean {
    return this.open > 0
  }

  /** Resolves when no batch is out, or after maxHoldMs. */
  clear(): Promise<void> {
    if (this.open === 0) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done)
        resolve()
      }, this.maxHoldMs)
      timer.unref?.()
      this.waiters.push(done)
    })
  }

  private release(): void {
    const w = this.waiters
    this.waiters = []
    for (const r of w) r()
  }
}
