// What the playlog domain provides to the other modules, by name and type: merged into
// `DomainProvisions` (platform/provisions.ts) as its tables are into the database's type.
import type { Hook } from '../../platform/hooks.js'
import type { PlayLogLimitSink, PlayLogService } from './index.js'

declare module '../../platform/provisions.js' {
  interface DomainProvisions {
    /** Proof of play: batches from devices (stored before their PUBACK), reads and CSV export. */
    playLog: PlayLogService
    /** Screens whose plays are refused for their rate or their zone's daily quota, and their recovery. */
    playLogLimits: Hook<PlayLogLimitSink>
  }
}
