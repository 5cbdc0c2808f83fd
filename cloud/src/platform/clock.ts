// Time and randomness are injected so tests are deterministic: services read
// `clock.now()` and make ids through `ids.next(kind)`, never Date.now() directly.
import { randomBytes } from 'node:crypto'
import { monotonicFactory } from 'ulid'
import { ID_PREFIX, type Clock, type IdKind } from '@svc/shared'

// One Clock (and test clock) for every package: defined in @svc/shared.
export { ManualClock, systemClock, type Clock } from '@svc/shared'

export type RandomSource = (n: number) => Buffer

export class IdGenerator {
  private readonly ulid: (seedTime?: number) => string
  constructor(
    private readonly clock: Clock,
    random: RandomSource = randomBytes,
  ) {
    this.ulid = monotonicFactory(() => random(1)[0]! / 256)
  }
  /** A time-ordered id such as `scr_01JD…`: newest-first order is id order. */
  next(kind: IdKind): string {
    return `${ID_PREFIX[kind]}_${this.ulid(this.clock.now().getTime()).toLowerCase()}`
  }
}
