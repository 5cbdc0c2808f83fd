// Time as a dependency, one definition for every package: `Clock` reads the wall clock
// and `Timers` schedules callbacks, so code never calls Date.now() or setTimeout directly
// and tests move time by hand (ManualClock) instead of sleeping.

export interface Clock {
  now(): Date
}

export type TimerHandle = unknown

export interface Timers {
  /** Runs `fn` once after `ms` milliseconds. */
  setTimer(fn: () => void, ms: number): TimerHandle
  clearTimer(handle: TimerHandle): void
}

/** The real clock and the real timers (one object serves both). */
export const systemClock: Clock & Timers = {
  now: () => new Date(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

export const systemTimers: Timers = systemClock

/** Resolves after `ms` on `timers` (at once for ms ≤ 0), or when `signal` aborts (without rejecting). */
export function wait(timers: Timers, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const onAbort = (): void => {
      timers.clearTimer(handle)
      resolve()
    }
    const handle = timers.setTimer(
      () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      },
      Math.max(0, ms),
    )
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** Lets pending promise jobs, nextTicks and immediates run. */
export async function settle(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r))
}

/**
 * A clock and timers that only move when told to. Due timers fire in time order inside
 * advance() (synchronously) or advanceSettling() (letting promise continuations run
 * between them, for code that awaits between timers).
 */
export class ManualClock implements Clock, Timers {
  /** Current time, ms since the epoch. */
  nowMs: number
  #seq = 0
  readonly timers = new Map<number, { at: number; fn: () => void }>()
  /** Every delay asked of setTimer, in order (tests check backoff sequences). */
  readonly delays: number[] = []

  constructor(start: Date | string | number = '2026-01-01T00:00:00.000Z') {
    this.nowMs = new Date(start).getTime()
  }

  now(): Date {
    return new Date(this.nowMs)
  }

  set(at: Date | string | number): void {
    this.nowMs = new Date(at).getTime()
  }

  readonly setTimer = (fn: () => void, ms: number): TimerHandle => {
    const id = ++this.#seq
    this.delays.push(ms)
    this.timers.set(id, { at: this.nowMs + Math.max(0, ms), fn })
    return id
  }

  readonly clearTimer = (handle: TimerHandle): void => {
    this.timers.delete(handle as number)
  }

  /** Number of timers waiting. */
  get pending(): number {
    return this.timers.size
  }

  /** Moves time forward by `ms`, firing due timers in order. */
  advance(ms: number): void {
    const end = this.nowMs + ms
    for (let next = this.#due(end); next; next = this.#due(end)) this.#fire(next)
    this.nowMs = end
  }

  advanceTo(at: Date | string | number): void {
    this.advance(new Date(at).getTime() - this.nowMs)
  }

  /** Like advance(), but lets promise jobs and immediates run before and after each timer. */
  async advanceSettling(ms: number): Promise<void> {
    const end = this.nowMs + ms
    for (;;) {
      await settle()
      const next = this.#due(end)
      if (!next) break
      this.#fire(next)
    }
    this.nowMs = end
    await settle()
  }

  #due(end: number): [number, { at: number; fn: () => void }] | undefined {
    let next: [number, { at: number; fn: () => void }] | undefined
    for (const e of this.timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e
    return next
  }

  #fire([id, t]: [number, { at: number; fn: () => void }]): void {
    this.timers.delete(id)
    this.nowMs = Math.max(this.nowMs, t.at)
    t.fn()
  }
}
