// Work that runs once per cloud: two instances on one database ask for the same lease at
// once, and exactly one runs; the other takes over when the holder stops or dies.
import t from 'tap'
import { ManualClock } from '../../src/platform/clock.js'
import { WorkLeases } from '../../src/platform/cluster/WorkLeases.js'
import { WorkLeaseRepository } from '../../src/platform/cluster/WorkLeaseRepository.js'
import { IntervalWorker } from '../../src/platform/workers/Worker.js'
import { buildApp } from '../../src/app.js'
import { testConfig } from '../../src/config.js'
import { eachEngine } from '../db/engines.js'

class Counting extends IntervalWorker {
  runs = 0
  constructor(intervalMs = 60_000) {
    super(intervalMs, { error: () => undefined })
  }
  protected async tick(): Promise<void> {
    this.runs++
  }
}

eachEngine(t, 'two instances asking at once: one runs, renewals keep it there, a lapse hands it over', async (t, db) => {
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const a = new WorkLeases(new WorkLeaseRepository(db.kysely), clock, 'inst_a')
  const b = new WorkLeases(new WorkLeaseRepository(db.kysely), clock, 'inst_b')
  const wa = new Counting().oncePerCloud(a, 'status')
  const wb = new Counting().oncePerCloud(b, 'status')

  for (let i = 0; i < 5; i++) {
    const ran = await Promise.all([wa.runScheduled(), wb.runScheduled()])
    t.equal(ran.filter(Boolean).length, 1, `tick ${i}: exactly one instance ran`)
    clock.advance(60_000)
  }
  t.equal(wa.runs + wb.runs, 5)
  const first = wa.runs === 5 ? a : b
  const other = first === a ? b : a
  t.equal(await other.holderOf('status'), first.holder, 'the first taker keeps renewing its lease')

  // The holder dies (no release): the other takes over once the lease (3 intervals) lapses.
  // Its last renewal was one interval ago; the lease runs three.
  const survivor = first === a ? wb : wa
  clock.advance(60_000)
  t.equal(await survivor.runScheduled(), false, 'still held within the lease')
  clock.advance(60_000)
  t.equal(await survivor.runScheduled(), true, 'taken over after the lease lapsed')
  t.equal(await first.holderOf('status'), other.holder)

  // Different work has its own lease.
  t.equal(await new Counting().oncePerCloud(first, 'alerts').runScheduled(), true)
})

eachEngine(t, 'a clean stop releases the lease, so another instance takes over at its next tick', async (t, db) => {
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const a = new WorkLeases(new WorkLeaseRepository(db.kysely), clock, 'inst_a')
  const b = new WorkLeases(new WorkLeaseRepository(db.kysely), clock, 'inst_b')
  const wa = new Counting(1000).oncePerCloud(a, 'housekeeping')
  const wb = new Counting(1000).oncePerCloud(b, 'housekeeping')
  t.equal(await wa.runScheduled(), true)
  t.equal(await wb.runScheduled(), false)
  wa.start()
  await wa.stop()
  t.equal(await wb.runScheduled(), true, 'released at stop')
})

t.test('the product workers that must run once per cloud carry a lease; the others are safe on every instance', async (t) => {
  const app = await buildApp(testConfig())
  t.after(() => app.close())
  const named = Object.fromEntries(Object.entries(app.workers).map(([k, w]) => [k, w.leaseName]))
  t.same(named, {
    status: 'status',
    housekeeper: 'housekeeping',
    castExpiry: null,
    webhooks: null,
    alerts: 'alerts',
    mediaUrlRefresh: 'media-url-refresh',
    agentRollouts: 'agent-rollouts',
  })
})
