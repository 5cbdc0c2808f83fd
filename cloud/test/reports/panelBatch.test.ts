// The panel history of many screens reporting at once (a fleet after a cast or a connect
// storm): the reports heard in one turn are one batch, their stretches ended and started
// together (two statements per 500 screens, ReportsRepository.nextPanels). Every screen must
// end up with exactly the stretches it would have had reporting alone: each open stretch
// ended at that screen's next report's time (each screen's own, in one statement), a report that changes nothing starting none, and a
// screen whose new report carries the same time as its open stretch keeping that stretch.
// On both engines, past one chunk of 500.
import t from 'tap'
import type { Reported } from '@svc/shared/mqtt/index'
import { eachEngine } from '../db/engines.js'
import { PanelHistory } from '../../src/domains/reports/PanelHistory.js'

const SCREENS = 520
const id = (i: number) => `scr_panel${String(i).padStart(4, '0')}`

function report(i: number, at: string, power: 'on' | 'off', playing = true) {
  const reported: Reported = {
    version: 1,
    playing: playing ? { source: 'schedule', contentKind: 'media', contentId: 'med_a' } : { source: 'none', contentKind: null, contentId: null },
    panel: { power, at },
    at,
  }
  return { workspaceId: 'ws_panel', screenId: id(i), nodeId: null, reported, at }
}

eachEngine(t, 'a fleet reporting at once: each screen gets the stretches it would get alone', async (t, db) => {
  const errors: unknown[] = []
  const history = new PanelHistory(db, { error: (obj) => errors.push(obj) })
  const T0 = '2026-06-01T12:00:00.000Z'
  // Each screen's second report at its own time, so a stretch ended at another screen's time shows.
  const T1 = (i: number) => new Date(Date.parse('2026-06-01T12:05:00.000Z') + i * 1000).toISOString()
  const T2 = '2026-06-01T13:00:00.000Z'
  // Every screen's first report, in one turn: one batch.
  for (let i = 0; i < SCREENS; i++) await history.record(report(i, T0, 'on'))
  await history.idle()
  // Then: even screens turn off at T1, screens divisible by 3 stop playing at T1, the rest
  // report the same state again (nothing to record).
  for (let i = 0; i < SCREENS; i++) await history.record(report(i, T1(i), i % 2 === 0 ? 'off' : 'on', i % 3 !== 0))
  await history.idle()
  // Screen 1 changes twice in one turn (T2 off, then T2 on again at the same time): the
  // second change goes in the next batch and conflicts with the stretch the first started.
  await history.record(report(1, T2, 'off'))
  await history.record(report(1, T2, 'on'))
  await history.idle()
  t.same(errors, [], 'no batch failed')

  const rows = await db.kysely.selectFrom('panel_intervals').selectAll().orderBy('screen_id').orderBy('started_at').execute()
  const byScreen = new Map<string, typeof rows>()
  for (const r of rows) byScreen.set(r.screen_id, [...(byScreen.get(r.screen_id) ?? []), r])
  t.equal(byScreen.size, SCREENS, 'every screen has its history')
  let wrong = 0
  for (let i = 0; i < SCREENS; i++) {
    const got = (byScreen.get(id(i)) ?? []).map((r) => [r.started_at, r.ended_at, r.power, r.playing, r.showing])
    const off = i % 2 === 0
    const stops = i % 3 === 0
    let want: unknown[][]
    if (i === 1)
      want = [
        [T0, T2, 'on', 1, 1],
        [T2, null, 'off', 1, 0],
      ]
    else if (off || stops)
      want = [
        [T0, T1(i), 'on', 1, 1],
        [T1(i), null, off ? 'off' : 'on', stops ? 0 : 1, off || stops ? 0 : 1],
      ]
    else want = [[T0, null, 'on', 1, 1]]
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      if (wrong++ < 3) t.same(got, want, `screen ${i}'s stretches`)
    }
  }
  t.equal(wrong, 0, 'every screen has exactly its own stretches')
})
