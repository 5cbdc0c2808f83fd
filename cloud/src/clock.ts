// Time and randomness are injected so tests are deterministic: services read
// `clock.now()` and make ids through `ids.next(kind)`, never Date.now() directly.
import { randomBytes } from 'node:crypto'
import { monotonicFactory } from 'ulid'
import { ID_PREFIX, type IdKind } from '@svc/shared'

export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  private t: number
  constructor(start: Date | string | number = '2026-01-01T00:00:00.000Z') {
    this.t = new Date(start).getTime()
  }
  now(): Date {
    return new Date(this.t)
  }
  advance(ms: number): void {
    this.t += ms
  }
  set(at: Date | string | number): void {
    this.t = new Date(at).getTime()
  }
}

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
