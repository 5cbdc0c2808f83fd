// Time and randomness are injected so tests are deterministic: services read
// `clock.now()` and make ids through `ids.next(kind)`, never Date.now() directly.
import { randomBytes } from 'node:crypto'
import { monotonicFactory } from 'ulid'
import { ID_PREFIX, type Clock, type IdKind } from '@svc/shared'

// One Clock (and test clock) for every package: defined in @svc/shared.
export { ManualClock, systemClock, type Clock } from '@svc/shared'

export type RandomSource = (n: number) => Buffer

/** Random bytes IdGenerator draws from its source at a time. */
const RANDOM_BLOCK = 512

export class IdGenerator {
  private readonly ulid: (seedTime?: number) => string
  constructor(
    private readonly clock: Clock,
    random: RandomSource = randomBytes,
  ) {
    // Random bytes drawn a block at a time: a new millisecond's id takes 16 of them, and one
    // call into the random source per byte cost more than the rest of the id.
    let block: Buffer = Buffer.alloc(0)
    let at = 0
    this.ulid = monotonicFactory(() => {
      if (at >= block.length) {
        block = random(RANDOM_BLOCK)
        at = 0
      }
      return block[at++]! / 256
    })
  }
  /** A time-ordered id such as `scr_01JD…`: newest-first order is id order. */
  next(kind: IdKind): string {
    return `${ID_PREFIX[kind]}_${this.ulid(this.clock.now().getTime()).toLowerCase()}`
  }
}
