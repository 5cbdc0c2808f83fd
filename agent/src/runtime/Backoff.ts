// Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And
// Jitter"): the n-th wait is uniform in [0, min(cap, base * 2^n)). Full jitter spreads a
// thousand agents that lost the broker at the same instant over the whole window instead
// of bringing them back in lockstep. Randomness is injected so tests can pin it.

export interface BackoffOptions {
  /** First window, ms (default 1000). */
  baseMs?: number
  /** Largest window, ms (default 60000). */
  capMs?: number
  /** Uniform in [0, 1), Math.random in production. */
  random?: () => number
}

export class Backoff {
  readonly baseMs: number
  readonly capMs: number
  readonly #random: () => number
  #attempt = 0

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 1000
    this.capMs = options.capMs ?? 60_000
    if (!(this.baseMs > 0) || !(this.capMs >= this.baseMs)) throw new TypeError('Backoff: need 0 < baseMs <= capMs')
    this.#random = options.random ?? Math.random
  }

  /** How many delays were handed out since the last reset. */
  get attempt(): number {
    return this.#attempt
  }

  /** The upper bound of the window for the next delay. */
  get window(): number {
    // 2^31 is far past any cap; keeps the power finite.
    return Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.#attempt, 31))
  }

  /** The next delay in ms, then widens the window. */
  next(): number {
    const r = this.#random()
    const unit = r >= 0 && r < 1 ? r : 0
    const delay = Math.floor(unit * this.window)
    this.#attempt++
    return delay
  }

  /** After a success: the next failure starts from the smallest window again. */
  reset(): void {
    this.#attempt = 0
  }
}
