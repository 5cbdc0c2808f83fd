// The panel's history, from the screens' reports: a new stretch each time a screen's
// read-back power or its playing state changes, started when the report arrived. Reports
// are handled by the instance the device is connected to, one screen's in order; the last
// state of each screen is remembered here so a report that changes nothing costs no read.
import type { Database } from '../../platform/db/Database.js'
import type { ScreenReport } from '../screens/index.js'
import { ReportsRepository } from './ReportsRepository.js'

/** Screens whose last state is remembered (a bound on memory; the rest are read back). */
const REMEMBERED = 50_000

export class PanelHistory {
  private readonly repo: ReportsRepository
  private readonly last = new Map<string, string>()
  private chain: Promise<void> = Promise.resolve()

  constructor(
    db: Database,
    private readonly log: { error(obj: unknown, msg: string): void },
  ) {
    this.repo = new ReportsRepository(db.kysely)
  }

  /** Records the report's state if it differs from the screen's current stretch. */
  record(r: ScreenReport): Promise<void> {
    const power = r.reported.panel?.power ?? 'unknown'
    const playing = r.reported.playing.source !== 'none' ? 1 : 0
    const state = `${power}|${playing}`
    if (this.last.get(r.screenId) === state) return Promise.resolve()
    const next = this.chain.then(async () => {
      try {
        const open = await this.repo.openPanel(r.screenId)
        if (!open || `${open.power}|${open.playing}` !== state) {
          await this.repo.nextPanel({
            workspace_id: r.workspaceId,
            screen_id: r.screenId,
            started_at: r.at,
            ended_at: null,
            power,
            playing,
            showing: power !== 'off' && playing ? 1 : 0,
          })
        }
        if (this.last.size >= REMEMBERED) this.last.clear()
        this.last.set(r.screenId, state)
      } catch (err) {
        this.log.error({ err, screenId: r.screenId }, 'recording the panel history failed')
      }
    })
    this.chain = next
    return next
  }

  /** Resolves when every report heard so far is recorded. */
  idle(): Promise<void> {
    return this.chain
  }
}
