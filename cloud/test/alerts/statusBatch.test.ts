// Alert evaluation of many online/offline transitions at once (AlertEvaluator
// screensStatusChanged, what a connect storm's dispatch runs feed it): the same states and
// events as taking the transitions one by one, on both engines, in a few statements
// whatever the number of screens; a screen that changes twice in one batch is taken in
// order. The one-by-one reference runs on SQLite (750 transitions, each its own
// transaction): on PostgreSQL the batch must end where they end there, so the engines agree
// too. The alerts module is wired without the HTTP edge (wireDomains): the subject is its
// evaluation rules.
import t, { type Test } from 'tap'
import { eachEngine, openEngine } from '../db/engines.js'
import { countReads } from '../helpers.js'
import { owner, wireDomains, workspace } from '../domains.js'
import type { Database } from '../../src/platform/db/Database.js'
import type { ScreenStatusInput } from '../../src/domains/alerts/AlertEvaluator.js'

const N = 450 // more than one chunk of the IN lists and multi-row writes

/** The alerts module on `db`, with a workspace whose one rule opens an event at once for any outage. */
async function setup(t: Test, db: Database) {
  const d = await wireDomains(t, ['alerts', 'alertRules'], {}, { db })
  const workspaceId = await workspace(d)
  await d.provided.alertRules.create(owner(workspaceId), { name: 'Any outage', config: { codes: ['connection-lost'], thresholds: { minutes: 0 } } })
  return { d, alerts: d.provided.alerts, workspaceId }
}

/** The story: every screen online, a third offline (events open at once: threshold 0), then back with one screen dropping again and a repeated status renaming another. */
function story(workspaceId: string): ScreenStatusInput[][] {
  const screen = (i: number, name = `S${i}`) => ({ id: `scr_${String(i).padStart(4, '0')}`, name, nodeId: null })
  const all = Array.from({ length: N }, (_, i) => i)
  const third = all.filter((i) => i % 3 === 0)
  return [
    all.map((i) => ({ workspaceId, screen: screen(i), status: 'online' as const })),
    third.map((i) => ({ workspaceId, screen: screen(i), status: 'offline' as const })),
    [
      ...third.map((i) => ({ workspaceId, screen: screen(i), status: 'online' as const })),
      { workspaceId, screen: screen(0), status: 'offline' as const },
      { workspaceId, screen: screen(1, 'Renamed'), status: 'online' as const },
    ],
  ]
}

async function snapshot(db: Database, workspaceId: string) {
  const k = db.kysely
  const states = await k
    .selectFrom('alert_screen_state')
    .select(['screen_id', 'screen_name', 'status', 'since', 'flaps'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('screen_id')
    .execute()
  const events = await k
    .selectFrom('alert_events')
    .select(['screen_id', 'code', 'opened_at', 'closed_at', 'detail'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('screen_id')
    .orderBy('opened_at')
    .execute()
  return { states, events }
}

/** The story taken one transition at a time on SQLite: what each engine's batch must end as (run once, on first use). */
let oneByOne: Promise<Awaited<ReturnType<typeof snapshot>>> | undefined
function reference(t: Test) {
  oneByOne ??= (async () => {
    const one = await setup(t, await openEngine(t, 'sqlite'))
    for (const step of story(one.workspaceId)) {
      for (const c of step) await one.alerts.screenStatusChanged(c.workspaceId, c.screen, c.status, c.at)
      one.d.clock.advance(60_000)
    }
    return snapshot(one.d.db, one.workspaceId)
  })()
  return oneByOne
}

eachEngine(t, 'a batch ends where the same transitions taken one by one on SQLite end', async (t, db) => {
  const x = await reference(t)
  const b = await setup(t, db)
  for (const step of story(b.workspaceId)) {
    await b.alerts.screensStatusChanged(step)
    b.d.clock.advance(60_000)
  }
  const y = await snapshot(db, b.workspaceId)
  t.equal(y.states.length, N)
  t.same(y.states, x.states, 'the same screen states')
  t.equal(y.events.length, Math.ceil(N / 3) + 1, 'an event per outage, and the screen that dropped again')
  t.same(y.events, x.events, 'the same events, opened and closed at the same times with the same detail')
  t.equal(y.states.find((s) => s.screen_id === 'scr_0000')?.status, 'offline', 'a screen twice in one batch: its last change wins')
  t.equal(y.states.find((s) => s.screen_id === 'scr_0001')?.screen_name, 'Renamed', 'a repeated status renames')
  t.equal(y.events.filter((e) => e.closed_at === null).length, 1, 'only the screen that dropped again is open')
})

eachEngine(t, 'a connect storm’s batch is a few reads, not some per screen', async (t, db) => {
  const { alerts, workspaceId } = await setup(t, db)
  const [online, offline, back] = story(workspaceId)
  await alerts.screensStatusChanged(online!)
  await alerts.screensStatusChanged(offline!)
  const reads = countReads(db)
  await alerts.screensStatusChanged(back!.slice(0, Math.ceil(N / 3)))
  // states (one chunk), open events (one chunk), the rule of the closed events (once)
  t.ok(reads.n <= 3, `${reads.n} reads for ${Math.ceil(N / 3)} screens back online, their events closing`)
  const before = reads.n
  const fresh = Array.from({ length: N }, (_, i) => ({ workspaceId, screen: { id: `scr_new${i}`, nodeId: null }, status: 'online' as const }))
  await alerts.screensStatusChanged(fresh)
  t.ok(reads.n - before <= 4, `${reads.n - before} reads for ${N} screens seen for the first time (two chunks of states, two of open events)`)
})
