// Hourly roll-ups of the availability history, so a year over a large fleet stays a bounded
// read per screen: closed stretches shorter than an hour (a flapping link, a panel turned
// off and on) are folded into one row per screen and UTC hour holding their union; longer
// ones are marked kept and read as they are (one row is already cheap). Stretches still
// open are never rolled: one closed later in the past (a restart that finds a device gone
// marks it offline from its link drop) is read raw until the next run folds it in. The
// report reads both, so what it answers is the same with or without roll-ups.
// Runs under a work lease: one instance at a time folds rows (read, merge, write).
import type { Database } from '../../platform/db/Database.js'
import { IntervalWorker } from '../../platform/workers/Worker.js'
import { normalize, type Span } from './intervals.js'
import { ReportsRepository, type UnrolledRow } from './ReportsRepository.js'
import type { AvailabilityHoursTable } from './tables.js'

const HOUR_MS = 3_600_000
/** Stretches read per step. */
const STEP = 2000

type Kind = 'online' | 'showing'

export class AvailabilityRollup extends IntervalWorker {
  constructor(
    private readonly db: Database,
    intervalMs: number,
    log: { error(obj: unknown, msg: string): void },
  ) {
    super(intervalMs, log)
  }

  protected async tick(): Promise<void> {
    await this.rollAll()
  }

  /** Folds every closed stretch not yet looked at; resolves with how many were rolled or kept. */
  async rollAll(): Promise<number> {
    let n = 0
    for (const [table, kind] of [
      ['presence_intervals', 'online'],
      ['panel_intervals', 'showing'],
    ] as const)
      for (;;) {
        const rows = await new ReportsRepository(this.db.kysely).unrolled(table, STEP)
        if (!rows.length) break
        await this.fold(table, kind, rows)
        n += rows.length
        if (rows.length < STEP) break
      }
    return n
  }

  private async fold(table: 'presence_intervals' | 'panel_intervals', kind: Kind, rows: UnrolledRow[]): Promise<void> {
    const short: UnrolledRow[] = []
    const long: UnrolledRow[] = []
    for (const r of rows) (Date.parse(r.ended_at) - Date.parse(r.started_at) < HOUR_MS ? short : long).push(r)
    // The pieces of each short stretch per (screen, hour).
    const pieces = new Map<string, { workspace_id: string; screen_id: string; hour: string; spans: Span[] }>()
    for (const r of short) {
      const s = Date.parse(r.started_at)
      const e = Date.parse(r.ended_at)
      for (let h = Math.floor(s / HOUR_MS) * HOUR_MS; h < e; h += HOUR_MS) {
        const a = Math.max(s, h)
        const b = Math.min(e, h + HOUR_MS)
        if (a >= b) continue
        const hour = new Date(h).toISOString()
        const key = `${r.screen_id}|${hour}`
        let p = pieces.get(key)
        if (!p) pieces.set(key, (p = { workspace_id: r.workspace_id, screen_id: r.screen_id, hour, spans: [] }))
        p.spans.push([a, b])
      }
    }
    await this.db.transaction(async (tx) => {
      const repo = new ReportsRepository(tx.kysely)
      const existing = new Map((await repo.hoursAt([...pieces.values()])).map((h) => [`${h.screen_id}|${h.hour}`, h]))
      const out: AvailabilityHoursTable[] = []
      for (const [key, p] of pieces) {
        const h0 = Date.parse(p.hour)
        const old = existing.get(key)
        const merged = (k: Kind) =>
          JSON.stringify(normalize([...(old ? (JSON.parse(old[k]) as Span[]) : []), ...(k === kind ? p.spans : [])], h0, h0 + HOUR_MS))
        out.push({ workspace_id: p.workspace_id, screen_id: p.screen_id, hour: p.hour, online: merged('online'), showing: merged('showing') })
      }
      await repo.putHours(out)
      await repo.markRolled(table, short, 1)
      await repo.markRolled(table, long, 2)
    })
  }
}
