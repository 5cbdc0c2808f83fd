// Alert evaluation of many online/offline transitions at once (AlertEvaluator
// screensStatusChanged, what a connect storm's dispatch runs feed it): the same states and
// events as taking the transitions one by one, on both engines, in a few statements
// whatever the number of screens; a screen that changes twice in one batch is taken in
// order. The one-by-one reference runs on SQLite (750 transitions, each its own
// transaction): on PostgreSQL the batch must end where they end there, so the engines agree
// too.
import { servicesOf } from '../../src/app.js'
import t, { type Test } from 'tap'
import { forEngines, openEngine } from '../db/engines.js'
import { build as buildApp, countReads, type Harness } from '../helpers.js'
import type { ScreenStatusInput } from '../../src/domains/alerts/AlertEvaluator.js'

const N = 450 // more than one chunk of the IN lists and multi-row writes

async function setup(h: Harness) {
  const { apiKey, workspaceId } = await h.workspace()
  const res = await h.req('POST', '/v1/alert-rules', apiKey, { name: 'Any outage', config: { codes: ['connection-lost'], thresholds: { minutes: 0 } } })
  if (res.statusCode !== 201) throw new Error(res.body)
  return { apiKey, workspaceId }
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

async function snapshot(h: Harness, workspaceId: string) {
  const k = servicesOf(h.app).db.kysely
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
    const one = await buildApp(t, {}, { db: await openEngine(t, 'sqlite') })
    const a = await setup(one)
    for (const step of story(a.workspaceId)) {
      for (const c of step) await servicesOf(one.app).alerts.screenStatusChanged(c.workspaceId, c.screen, c.status, c.at)
      one.clock.advance(60_000)
    }
    return snapshot(one, a.workspaceId)
  })()
  return oneByOne
}

forEngines(t, (t, build, engine) => {
  t.test(`a batch ends where the same transitions one by one end${engine === 'sqlite' ? '' : ' on SQLite'}`, async (t: Test) => {
    const x = await reference(t)
    const batch = await build(t)
    const b = await setup(batch)
    for (const step of story(b.workspaceId)) {
      await servicesOf(batch.app).alerts.screensStatusChanged(step)
      batch.clock.advance(60_000)
    }
    const y = await snapshot(batch, b.workspaceId)
    t.equal(y.states.length, N)
    t.same(y.states, x.states, 'the same screen states')
    t.equal(y.events.length, Math.ceil(N / 3) + 1, 'an event per outage, and the screen that dropped again')
    t.same(y.events, x.events, 'the same events, opened and closed at the same times with the same detail')
    t.equal(y.states.find((s) => s.screen_id === 'scr_0000')?.status, 'offline', 'a screen twice in one batch: its last change wins')
    t.equal(y.states.find((s) => s.screen_id === 'scr_0001')?.screen_name, 'Renamed', 'a repeated status renames')
    t.equal(y.events.filter((e) => e.closed_at === null).length, 1, 'only the screen that dropped again is open')
  })

  t.test('a connect storm’s batch is a few reads, not some per screen', async (t: Test) => {
    const h = await build(t)
    const { workspaceId } = await setup(h)
    const [online, offline, back] = story(workspaceId)
    await servicesOf(h.app).alerts.screensStatusChanged(online!)
    await servicesOf(h.app).alerts.screensStatusChanged(offline!)
    const reads = countReads(h)
    await servicesOf(h.app).alerts.screensStatusChanged(back!.slice(0, Math.ceil(N / 3)))
    // states (one chunk), open events (one chunk), the rule of the closed events (once)
    t.ok(reads.n <= 3, `${reads.n} reads for ${Math.ceil(N / 3)} screens back online, their events closing`)
    const before = reads.n
    const fresh = Array.from({ length: N }, (_, i) => ({ workspaceId, screen: { id: `scr_new${i}`, nodeId: null }, status: 'online' as const }))
    await servicesOf(h.app).alerts.screensStatusChanged(fresh)
    t.ok(reads.n - before <= 4, `${reads.n - before} reads for ${N} screens seen for the first time (two chunks of states, two of open events)`)
  })
})
