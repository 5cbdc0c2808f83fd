// Time for the agent, injected everywhere: `Clock` reads the wall clock (decisions,
// timestamps, cast expiry) and `Timers` schedules waits (backoff, polling), so tests
// move time by hand instead of sleeping.
export interface Clock {
  now(): Date
}

export type TimerHandle = unknown

export interface Timers {
  /** Runs `fn` once after `ms` milliseconds. */
  setTimer(fn: () => void, ms: number): TimerHandle
  clearTimer(handle: TimerHandle): void
}

export const systemClock: Clock = { now: () => new Date() }

export const systemTimers: Timers = {
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

/** Resolves after `ms` on `timers`, or at once when `signal` aborts (without rejecting). */
export function wait(timers: Timers, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const onAbort = (): void => {
      timers.clearTimer(handle)
      resolve()
    }
    const handle = timers.setTimer(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
