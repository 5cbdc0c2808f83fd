// The panel's history, from the screens' reports: a new stretch each time a screen's
// read-back power or its playing state changes, started when the report arrived. Reports
// are handled by the instance the device is connected to, one screen's in order; the last
// state of each screen is remembered here so a report that changes nothing costs no read.
// Reports that arrive together (a fleet reporting at once) are recorded together: one read of
// their open stretches and one transaction of two statements (per 500 screens) for the
// stretches they end and start.
import type { Database } from '../../platform/db/Database.js'
import type { ScreenReport } from '../screens/index.js'
import { ReportsRepository } from './ReportsRepository.js'

/** Screens whose last state is remembered (a bound on memory; the rest are read back). */
const REMEMBERED = 50_000

interface Pending {
  r: ScreenReport
  power: string
  playing: number
  state: string
}

interface Batch {
  items: Map<string, Pending>
  flushing: boolean
}

export class PanelHistory {
  private readonly last = new Map<string, string>()
  /** Reports waiting, in batches recorded in order; a screen is at most once in a batch. */
  private readonly batches: Batch[] = []
  private chain: Promise<void> = Promise.resolve()

  constructor(
    private readonly db: Database,
    private readonly log: { error(obj: unknown, msg: string): void },
  ) {}

  /** Records the report's state if it differs from the screen's current stretch. */
  record(r: ScreenReport): Promise<void> {
    const power = r.reported.panel?.power ?? 'unknown'
    const playing = r.reported.playing.source !== 'none' ? 1 : 0
    const state = `${power}|${playing}`
    if (this.latest(r.screenId) === state) return Promise.resolve()
    let batch = this.batches[this.batches.length - 1]
    // A second change of a screen already waiting goes in the next batch, so no stretch is lost.
    if (!batch || batch.flushing || batch.items.has(r.screenId)) {
      batch = { items: new Map(), flushing: false }
      this.batches.push(batch)
      // After the reports handled in this turn have been heard: they make one batch.
      this.chain = this.chain.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(() => this.flush())
    }
    batch.items.set(r.screenId, { r, power, playing, state })
    // The caller goes on to the next report at once (idle() waits for the record).
    return Promise.resolve()
  }

  /** The screen's newest known state: of a report still waiting, else the last recorded. */
  private latest(screenId: string): string | undefined {
    for (let i = this.batches.length - 1; i >= 0; i--) {
      const p = this.batches[i]!.items.get(screenId)
      if (p) return p.state
    }
    return this.last.get(screenId)
  }

  private async flush(): Promise<void> {
    const batch = this.batches[0]!
    batch.flushing = true
    const items = [...batch.items.values()]
    try {
      const open = new Map(
        (await new ReportsRepository(this.db.kysely).openPanels(items.map((b) => b.r.screenId))).map((o) => [o.screen_id, `${o.power}|${o.playing}`]),
      )
      const changed = items.filter((b) => open.get(b.r.screenId) !== b.state)
      if (changed.length)
        await this.db.transaction((tx) =>
          new ReportsRepository(tx.kysely).nextPanels(
            changed.map(({ r, power, playing }) => ({
              workspace_id: r.workspaceId,
              screen_id: r.screenId,
              started_at: r.at,
              ended_at: null,
              power,
              playing,
              showing: power !== 'off' && playing ? 1 : 0,
            })),
          ),
        )
      if (this.last.size + items.length >= REMEMBERED) this.last.clear()
      for (const b of items) this.last.set(b.r.screenId, b.state)
    } catch (err) {
      this.log.error({ err, screens: items.length }, 'recording the panel history failed')
    } finally {
      this.batches.shift()
    }
  }

  /** Resolves when every report heard so far is recorded. */
  idle(): Promise<void> {
    return this.chain
  }
}
