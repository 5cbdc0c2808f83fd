// The cloud-wide gauges' queries on both engines: screens by status and the outbox's
// pending events and lag (on the injected clock), as the metrics lease holder reports them,
// parsed as Prometheus text.
import t from 'tap'
import { servicesOf } from '../src/app.js'
import { forEngines } from './db/engines.js'
import { parseScrape, value } from './fixtures/prometheus.js'
import { pairScreen } from './screenHelpers.js'

forEngines(t, (t, build) => {
  t.test('screens by status, outbox pending and lag', async (t) => {
    const h = await build(t)
    const { workspaceId, apiKey } = await h.workspace()
    const { metrics, db, outbox } = servicesOf(h.app)
    const read = async () => parseScrape(200, metrics.contentType, await metrics.scrape())

    const empty = await read()
    t.equal(value(empty, 'svc_metrics_cloud_wide'), 1, 'the one instance holds the metrics lease')
    t.equal(value(empty, 'svc_screens', { scope: 'cloud' }), undefined, 'no screen, no series')
    t.equal(value(empty, 'svc_outbox_pending', { scope: 'cloud' }), 0)
    t.equal(value(empty, 'svc_outbox_lag_seconds', { scope: 'cloud' }), 0)

    await pairScreen(h, apiKey, 'Lobby')
    await pairScreen(h, apiKey, 'Bar')
    await outbox.dispatch()
    const at = h.clock.now().toISOString()
    const event = (n: number) => ({
      event: 'screen.offline' as const,
      workspaceId,
      occurredAt: at,
      data: { screenId: `scr_${n}`, screenName: `Screen ${n}`, nodeId: null, at },
    })
    // Recorded, not dispatched: pending, and waiting as long as the clock moves.
    await db.transaction((tx) => outbox.recordMany(tx, [event(1), event(2), event(3)]))
    h.clock.advance(42_000)
    const s = await read()
    t.equal(value(s, 'svc_screens', { status: 'offline', scope: 'cloud' }), 2, 'two paired screens, offline')
    t.equal(value(s, 'svc_outbox_pending', { scope: 'cloud' }), 3, 'three events pending')
    t.equal(value(s, 'svc_outbox_lag_seconds', { scope: 'cloud' }), 42, 'the oldest has waited 42 s')

    await outbox.dispatch()
    const after = await read()
    t.equal(value(after, 'svc_outbox_pending', { scope: 'cloud' }), 0, 'dispatched: none pending')
    t.equal(value(after, 'svc_outbox_lag_seconds', { scope: 'cloud' }), 0, 'and no lag')
  })

  t.test('the metrics lease is renewed by a scrape at most every 10 s, not written by each', async (t) => {
    const h = await build(t)
    const { metrics, db } = servicesOf(h.app)
    const expiry = async () =>
      Date.parse((await db.kysely.selectFrom('work_leases').select('expires_at').where('name', '=', 'metrics').executeTakeFirstOrThrow()).expires_at)
    const t0 = h.clock.now().getTime()
    await metrics.scrape()
    t.equal(await expiry(), t0 + 60_000, 'taken for a minute by the first scrape')
    h.clock.advance(9_000)
    t.equal(value(parseScrape(200, metrics.contentType, await metrics.scrape()), 'svc_metrics_cloud_wide'), 1, 'still the holder 9 s later')
    t.equal(await expiry(), t0 + 60_000, 'with no write')
    h.clock.advance(2_000)
    await metrics.scrape()
    t.equal(await expiry(), t0 + 71_000, '11 s after the last renewal: renewed for a minute from now')
  })
})
