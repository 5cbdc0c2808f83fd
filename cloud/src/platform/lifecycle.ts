// Stopping what was started, in reverse. Each resource registers its stop step where it is
// opened (`add`), so the steps stand in start order; close() runs them last-added first.
// Every step is guarded: one that throws, rejects or outlasts its timeout is logged
// (`{ step, err }` at error level) and the next one runs anyway, so a failing step never
// leaves a later one (the database, say) open. close() runs once; a second call waits for
// the first. It never rejects.
//
// A resource that must stop after one opened before it (work fed by that earlier resource
// until it stops) is added to a group() reserved before that resource: the group's steps
// run at the group's place, in their own reverse order, or in the order they were added
// for a group('added') (work drained from producers to the consumers added after them).
//
// Timeouts: a step may take `timeoutMs` (default STEP_TIMEOUT_MS, 10 s; Infinity waits as
// long as it takes). A step past its timeout is logged and left running; the close goes on.
import { performance } from 'node:perf_hooks'
import { type Logger, silentLogger, systemTimers, type Timers } from '@svc/shared'

/** How long a stop step may take before the close goes on without it. */
export const STEP_TIMEOUT_MS = 10_000

export interface StepOptions {
  /** Milliseconds this step may take; default the lifecycle's (STEP_TIMEOUT_MS). Infinity: no limit. */
  timeoutMs?: number
}

/** Where stop steps are added (a lifecycle, or a group reserved in one). */
export interface StopSteps {
  /** `stop` runs on close, before every step added earlier and after every one added later. */
  add(name: string, stop: () => unknown, opts?: StepOptions): void
}

interface Step {
  name: string
  stop: () => unknown
  timeoutMs: number
}

type Entry = Step | { group: Step[]; order: 'reverse' | 'added' }

export class Lifecycle implements StopSteps {
  private readonly entries: Entry[] = []
  private closing: Promise<void> | null = null
  private log: Logger
  private readonly timers: Timers
  private readonly timeoutMs: number

  constructor(opts: { log?: Logger; timers?: Timers; timeoutMs?: number } = {}) {
    this.log = opts.log ?? silentLogger
    this.timers = opts.timers ?? systemTimers
    this.timeoutMs = opts.timeoutMs ?? STEP_TIMEOUT_MS
  }

  /** Where failures are logged from now on (the app's logger once it exists; silent before). */
  useLog(log: Logger): void {
    this.log = log
  }

  add(name: string, stop: () => unknown, opts: StepOptions = {}): void {
    this.entries.push(this.step(name, stop, opts))
  }

  /** Reserves the current place in the order for steps added later; they run in reverse order, or as added. */
  group(order: 'reverse' | 'added' = 'reverse'): StopSteps {
    const steps: Step[] = []
    this.entries.push({ group: steps, order })
    return { add: (name, stop, opts = {}) => void steps.push(this.step(name, stop, opts)) }
  }

  /** The steps' names in the order close() runs them. */
  names(): string[] {
    return this.ordered().map((s) => s.name)
  }

  /** Runs every step once, last-added first; resolves when all have ended (or timed out). */
  close(): Promise<void> {
    this.closing ??= this.run()
    return this.closing
  }

  private step(name: string, stop: () => unknown, opts: StepOptions): Step {
    if (this.closing) throw new Error(`stop step "${name}" added after the close began`)
    return { name, stop, timeoutMs: opts.timeoutMs ?? this.timeoutMs }
  }

  private ordered(): Step[] {
    const out: Step[] = []
    for (const e of [...this.entries].reverse()) {
      if ('group' in e) out.push(...(e.order === 'added' ? e.group : [...e.group].reverse()))
      else out.push(e)
    }
    return out
  }

  private async run(): Promise<void> {
    for (const step of this.ordered()) await this.runStep(step)
  }

  private async runStep(step: Step): Promise<void> {
    const started = performance.now()
    let timer: unknown
    const outcome = (async () => step.stop())().then(
      () => 'done' as const,
      (err: unknown) => {
        this.log.error({ step: step.name, err }, 'stop step failed')
        return 'failed' as const
      },
    )
    const limit =
      step.timeoutMs === Number.POSITIVE_INFINITY
        ? null
        : new Promise<'timeout'>((resolve) => {
            timer = this.timers.setTimer(() => resolve('timeout'), step.timeoutMs)
          })
    const result = limit ? await Promise.race([outcome, limit]) : await outcome
    if (limit) this.timers.clearTimer(timer)
    if (result === 'timeout') {
      const err = new Error(`stop step "${step.name}" took longer than ${step.timeoutMs} ms; the close goes on without it`)
      this.log.error({ step: step.name, err }, 'stop step timed out')
    } else this.log.debug({ step: step.name, ms: Math.round(performance.now() - started) }, 'stopped')
  }
}
