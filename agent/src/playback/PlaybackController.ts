// Holds the latest desired state and keeps the playback decision current:
// on a newer desired state, and on its own timer at the next instant the
// decision could change (schedule boundary, cast expiry). Time is injected.
import { EventEmitter } from 'node:events'
import { isDeepStrictEqual } from 'node:util'
import type { DesiredState } from '@svc/shared/mqtt/index'
import { decidePlayback, type PlaybackDecision } from '@svc/shared/playback/index'

export type TimerHandle = unknown

export interface PlaybackControllerOptions {
  /** Source of the current time. */
  clock: { now(): Date }
  /** Schedules `fn` after `ms` milliseconds (setTimeout in production). */
  setTimer(fn: () => void, ms: number): TimerHandle
  /** Cancels a timer from setTimer. */
  clearTimer(handle: TimerHandle): void
  /**
   * Longest single wait. The decision is re-checked at least this often so a
   * wall-clock jump (NTP sync after boot without an RTC) is noticed quickly
   * even though timers count elapsed time, not wall time. Default 60 s.
   */
  maxDelayMs?: number
}

export interface PlaybackControllerEvents {
  /** The decision changed: what the player shows must follow. */
  change: [decision: PlaybackDecision, previous: PlaybackDecision]
}

/** setTimeout's ceiling; longer delays fire at once. */
const MAX_TIMER_MS = 2_147_483_647

export class PlaybackController extends EventEmitter<PlaybackControllerEvents> {
  readonly #clock: PlaybackControllerOptions['clock']
  readonly #setTimer: PlaybackControllerOptions['setTimer']
  readonly #clearTimer: PlaybackControllerOptions['clearTimer']
  readonly #maxDelayMs: number
  #desired: DesiredState | null = null
  #decision: PlaybackDecision
  #timer: { handle: TimerHandle } | null = null
  #running = false

  constructor(options: PlaybackControllerOptions) {
    super()
    if (!options || typeof options.clock?.now !== 'function') throw new TypeError('PlaybackController: clock.now is required')
    if (typeof options.setTimer !== 'function' || typeof options.clearTimer !== 'function')
      throw new TypeError('PlaybackController: setTimer and clearTimer are required')
    const max = options.maxDelayMs ?? 60_000
    if (!(max > 0)) throw new TypeError('PlaybackController: maxDelayMs must be positive')
    this.#clock = options.clock
    this.#setTimer = options.setTimer
    this.#clearTimer = options.clearTimer
    this.#maxDelayMs = Math.min(max, MAX_TIMER_MS)
    this.#decision = decidePlayback(null, this.#clock.now())
  }

  /** The current decision. */
  get decision(): PlaybackDecision {
    return this.#decision
  }

  /** The desired state in force, or null before the first one. */
  get desired(): DesiredState | null {
    return this.#desired
  }

  /** The applied desired `version` (0 before any), for `reported`. */
  get version(): number {
    return this.#desired?.version ?? 0
  }

  /** Begins deciding and timing. Idempotent. */
  start(): void {
    if (this.#running) return
    this.#running = true
    this.recompute()
  }

  /** Cancels the timer; the last decision stays readable. Idempotent. */
  stop(): void {
    this.#running = false
    this.#cancelTimer()
  }

  /**
   * Takes a desired state if its version is newer than the one held; equal or
   * older versions (duplicates, stale retained copies) are ignored. Returns
   * whether it was applied.
   */
  apply(desired: DesiredState): boolean {
    if (this.#desired && desired.version <= this.#desired.version) return false
    this.#desired = desired
    if (this.#running) this.recompute()
    return true
  }

  /** Re-decides now (also called by the timer); emits `change` if the decision moved. */
  recompute(): PlaybackDecision {
    const now = this.#clock.now()
    const next = decidePlayback(this.#desired, now)
    const previous = this.#decision
    this.#decision = next
    if (this.#running) this.#arm(next, now)
    if (!sameDecision(previous, next)) this.emit('change', next, previous)
    return next
  }

  #arm(decision: PlaybackDecision, now: Date): void {
    this.#cancelTimer()
    const due = decision.nextChangeAt ? decision.nextChangeAt.getTime() - now.getTime() : Infinity
    // At least 1 ms so a clock that lags the timer cannot spin.
    const ms = Math.max(1, Math.min(due, this.#maxDelayMs))
    const timer: { handle: TimerHandle } = { handle: undefined }
    this.#timer = timer
    timer.handle = this.#setTimer(() => {
      if (this.#timer !== timer) return
      this.#timer = null
      if (this.#running) this.recompute()
    }, ms)
  }

  #cancelTimer(): void {
    if (this.#timer) {
      this.#clearTimer(this.#timer.handle)
      this.#timer = null
    }
  }
}

function sameDecision(a: PlaybackDecision, b: PlaybackDecision): boolean {
  const { nextChangeAt: _a, ...restA } = a
  const { nextChangeAt: _b, ...restB } = b
  return isDeepStrictEqual(restA, restB)
}
