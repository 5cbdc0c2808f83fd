/**
 * Time as a dependency: the simulator never calls the global timers directly,
 * so tests can drive delays and gaps with a manual clock. The types are the
 * shared ones (one definition): the simulator takes one object that is both a
 * `Clock` and `Timers` (systemClock and ManualClock are).
 */
import { wait, type Timers } from '@svc/shared'

export { systemClock, type Clock, type Timers } from '@svc/shared'

export function sleep(clock: Timers, ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve()
  return wait(clock, ms)
}
