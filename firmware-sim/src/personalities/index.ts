import type { Clock, Timers } from '../Clock.js'
import { CecPersonality } from './CecPersonality.js'
import { LgPersonality, type LgQuirks } from './LgPersonality.js'
import { MdcPersonality } from './MdcPersonality.js'
import { NecPersonality } from './NecPersonality.js'
import type { Personality, SimProtocol } from './Personality.js'
import { PjLinkPersonality } from './PjLinkPersonality.js'
import { RawPersonality, type RawPersonalityOptions } from './RawPersonality.js'

export * from './Personality.js'
export * from './MdcPersonality.js'
export * from './LgPersonality.js'
export * from './NecPersonality.js'
export * from './PjLinkPersonality.js'
export * from './RawPersonality.js'
export * from './CecPersonality.js'

export interface PersonalityOptions {
  lg?: LgQuirks
  raw?: RawPersonalityOptions
  pjlink?: { warmupMs?: number; cooldownMs?: number }
  clock?: Clock & Timers
}

export function createPersonality(protocol: SimProtocol, opts: PersonalityOptions = {}): Personality {
  switch (protocol) {
    case 'samsung-mdc':
      return new MdcPersonality()
    case 'lg':
      return new LgPersonality(opts.lg)
    case 'nec':
      return new NecPersonality()
    case 'pjlink':
      return new PjLinkPersonality({ ...opts.pjlink, ...(opts.clock ? { clock: opts.clock } : {}) })
    case 'cec':
      return new CecPersonality()
    case 'raw':
      return new RawPersonality(opts.raw)
    default:
      throw new TypeError(`unknown protocol "${String(protocol)}"`)
  }
}
