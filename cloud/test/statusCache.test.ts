// GET /v1/status is served from a view computed when a measurement is recorded or an
// incident changes: calls in between read nothing from the database, and concurrent
// calls after the view ran out of time share one computation.
import { servicesOf } from '../src/app.js'
import t from 'tap'
import { build, countReads } from './helpers.js'

const HOUR = 3600_000

t.test('between changes the view comes from memory, in both forms', async (t) => {
  const h = await build(t)
  await h.app.workers.status.runOnce()
  const reads = countReads(h)
  for (let i = 0; i < 10; i++) {
    const json = await h.req('GET', '/v1/status', null)
    t.equal(json.statusCode, 200)
    t.match(json.headers['content-type'], /^application\/json/)
    t.equal(json.json().data.state, 'operational')
    const text = await h.req('GET', '/v1/status?format=text', null)
    t.match(text.body, /^state: operational$/m)
  }
  t.equal(reads.n, 0, 'no database read per call')

  // An incident change recomputes it at once (this is the one computation).
  await servicesOf(h.app).status.openIncident({ title: 'Slow', impact: 'degraded' })
  const afterIncident = reads.n
  t.ok(afterIncident > 0)
  t.equal((await h.req('GET', '/v1/status', null)).json().data.state, 'degraded')
  t.equal(reads.n, afterIncident, 'served from the view the change computed')
})

t.test('once time alone changes it, concurrent calls share one computation', async (t) => {
  const h = await build(t)
  await h.app.workers.status.runOnce()
  const reads = countReads(h)
  h.clock.advance(3 * HOUR + 1)
  const one = await h.req('GET', '/v1/status', null)
  t.equal(one.json().data.state, 'unknown')
  const perComputation = reads.n
  t.ok(perComputation > 0, 'past the staleness edge the view is recomputed')

  h.clock.advance(86_400_000) // the next UTC day
  const before = reads.n
  const all = await Promise.all(Array.from({ length: 10 }, () => h.req('GET', '/v1/status', null)))
  for (const r of all) t.equal(r.json().data.days.at(-1).date, '2026-06-02')
  t.equal(reads.n - before, perComputation, 'ten concurrent calls, one computation')
})
