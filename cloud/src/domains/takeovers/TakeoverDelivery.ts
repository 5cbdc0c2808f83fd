// `delivery.applied` of casts and emergencies: a screen's reported state that shows a cast
// (playing.castId) or an emergency (playing.emergencyId) playing marks it applied on that
// screen, once. Reports are gathered and written together (one transaction per tick), so a
// fleet applying a cast at once costs a few writes, not one per screen.
import type { Database } from '../../platform/db/Database.js'
import type { Clock } from '../../platform/clock.js'
import { CastRepository } from './CastRepository.js'
import { EmergencyRepository } from './EmergencyRepository.js'
import type { ScreenReport } from '../screens/index.js'

type Pending = { casts: Map<string, Set<string>>; emergencies: Map<string, Set<string>> }

export class TakeoverDelivery {
  private pending: Pending = { casts: new Map(), emergencies: new Map() }
  private scheduled = false
  private chain: Promise<void> = Promise.resolve()

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly log: { error(obj: unknown, msg: string): void },
    /** The marks wait for it before they are written (the publisher's FanOutWindow: a fan-out's reads go first). */
    private readonly writeGate: { clear(): Promise<void> } | null = null,
    /** Called after emergencies were marked applied (their reach may be complete). */
    private readonly emergenciesApplied: () => Promise<unknown> = async () => undefined,
  ) {}

  /** ScreenPresence.onReported listener. */
  reported(r: Pick<ScreenReport, 'screenId' | 'reported'>): void {
    const { castId, emergencyId } = r.reported.playing
    if (castId) add(this.pending.casts, castId, r.screenId)
    if (emergencyId) add(this.pending.emergencies, emergencyId, r.screenId)
    if ((castId || emergencyId) && !this.scheduled) {
      this.scheduled = true
      setImmediate(() => this.flush())
    }
  }

  /** Resolves when every report received so far is written. */
  async idle(): Promise<void> {
    if (this.scheduled) await new Promise((r) => setImmediate(r))
    await this.chain
  }

  private flush(): void {
    this.scheduled = false
    const at = this.clock.now().toISOString()
    this.chain = this.chain
      .then(() => this.writeGate?.clear())
      .then(() => {
        // Taken after the wait: reports that came in meanwhile are written in this transaction.
        const batch = this.pending
        this.pending = { casts: new Map(), emergencies: new Map() }
        if (!batch.casts.size && !batch.emergencies.size) return
        return this.db
          .transaction(async (tx) => {
            const casts = new CastRepository(tx.kysely)
            const emergencies = new EmergencyRepository(tx.kysely)
            for (const [id, screens] of batch.casts) await casts.markApplied(id, [...screens], at)
            for (const [id, screens] of batch.emergencies) await emergencies.markApplied(id, [...screens], at)
          })
          .then(async () => {
            if (batch.emergencies.size) await this.emergenciesApplied()
          })
      })
      .catch((err) => this.log.error({ err }, 'recording applied casts and emergencies failed'))
  }
}

function add(m: Map<string, Set<string>>, id: string, screenId: string): void {
  const s = m.get(id)
  if (s) s.add(screenId)
  else m.set(id, new Set([screenId]))
}
