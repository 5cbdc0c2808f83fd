// What a CAP feed's alert does beyond its handling: the `emergency.started` webhook of an
// alert's emergency carries its source to a real HTTPS receiver; a document whose handling
// was interrupted (the instance died between claiming it and writing its outcome) is handled
// again once its lease runs out, adopting the emergency the interrupted run had started
// rather than starting a second; a run that outlives its lease does not leave a second
// emergency; deleting a feed clears the emergencies its alerts still hold. On both engines.
import t, { type Test } from 'tap'
import { servicesOf } from '../../src/app.js'
import { CAP_LEASE_MS } from '../../src/domains/cap/CapService.js'
import { ENGINES, openEngine, requirePostgres } from '../db/engines.js'
import { connectDevice, startCloud, type Cloud } from '../devicelink/link.js'
import { CA_FILE, startReceiver } from '../fixtures/receiver.js'
import { capDoc } from './capDocs.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

/** A hang guard: what was awaited is named in the rejection. */
const GUARD = HANG_GUARD_MS

function guard<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up after ${GUARD} ms waiting for ${what}`)), GUARD)
  })
  return Promise.race([p, expiry]).finally(() => clearTimeout(timer))
}

async function push(c: Cloud, feedId: string, secret: string, body: string) {
  const res = await fetch(`http://127.0.0.1:${c.running.httpPort}/v1/cap-feeds/${feedId}/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/cap+xml', authorization: `Bearer ${secret}` },
    body,
    signal: AbortSignal.timeout(GUARD),
  })
  return { status: res.status, body: (await res.json()) as any }
}

for (const engine of ENGINES) {
  t.test(engine, async (t: Test) => {
    if (engine === 'postgres' && !requirePostgres(t, `capRecovery [postgres]`)) return
    const receiver = await startReceiver()
    t.after(() => receiver.close())
    const c = await startCloud(t, {
      config: { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE },
      deps: { db: await openEngine(t, engine) },
    })
    c.content.add(c.workspaceId, { kind: 'media', id: 'med_map' })
    const screen = await c.pair('Lobby')
    const device = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, screen)
    await device.next(() => true, GUARD)
    const services = servicesOf(c.running.app)
    const feed = (await c.call('POST', '/v1/cap-feeds', { name: 'NWS', contentKind: 'media', contentId: 'med_map' })).body.data
    const active = async () => (await c.call('GET', '/v1/emergencies?status=active')).body.data as any[]
    const logRow = async (alertId: string) => ((await c.call('GET', `/v1/cap-feeds/${feed.id}/alerts`)).body.data as any[]).find((r) => r.id === alertId)

    await t.test('the emergency.started webhook of an alert carries its source', async (t) => {
      const ep = await c.call('POST', '/v1/webhooks', { url: receiver.url, events: ['emergency.started'] })
      t.equal(ep.status, 201, JSON.stringify(ep.body))
      const res = await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'HOOK1' }))
      t.match(res.body.data, { state: 'started', emergencyId: /^emg_/ })
      await services.outbox.dispatch()
      await services.webhookWorker.runOnce()
      const [got] = await receiver.waitFor(1, GUARD)
      t.equal(got!.headers['x-svc-event'], 'emergency.started')
      t.match(got!.body, {
        event: 'emergency.started',
        workspaceId: c.workspaceId,
        data: { id: res.body.data.emergencyId, presentation: 'fullscreen', source: { capFeedId: feed.id, alertId: res.body.data.alertId } },
      })
      t.equal((await c.call('DELETE', `/v1/webhooks/${ep.body.data.id}`)).status, 200)
      await c.call('POST', `/v1/emergencies/${res.body.data.emergencyId}/clear`)
    })

    await t.test('a handling interrupted after its emergency started is adopted once its lease runs out', async (t) => {
      const emergencies = services.emergencies
      const start = emergencies.start
      // The instance "dies" right after the emergency is stored: its handling never writes an outcome.
      let reached!: () => void
      const stalled = new Promise<void>((r) => (reached = r))
      let die!: (err: Error) => void
      emergencies.start = async (...args) => {
        await start.apply(emergencies, args)
        reached()
        return new Promise((_, reject) => (die = reject))
      }
      t.teardown(() => {
        emergencies.start = start
      })
      const pending = push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'CRASH1' }))
      await guard(stalled, 'the stalled handling to store its emergency')
      emergencies.start = start
      const [emg] = await active()
      t.ok(emg, 'the interrupted run stored its emergency')
      const alertId = emg.source.alertId as string
      t.match(await logRow(alertId), { state: 'received', emergencyId: null }, 'its log row is left received')

      // The same document again answers what is known: received, nothing started twice.
      t.match((await push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'CRASH1' }))).body.data, { alertId, state: 'received' })
      await services.capWorker.runOnce()
      t.equal((await logRow(alertId)).state, 'received', 'within its lease nobody takes it over')

      c.clock.advance(CAP_LEASE_MS)
      await services.capWorker.runOnce()
      t.match(await logRow(alertId), { state: 'started', emergencyId: emg.id, reason: /recovered/ })
      t.equal((await active()).length, 1, 'one emergency')
      // The interrupted run failing late writes nothing over the recovered outcome.
      die(new Error('the instance is gone'))
      const late = await guard(pending, 'the interrupted push to answer')
      t.same(late.body.data, { alertId, state: 'started', emergencyId: emg.id })
      t.match(await logRow(alertId), { state: 'started', emergencyId: emg.id })
      // Recovered means handled: its Cancel clears it.
      const res = await push(
        c,
        feed.id,
        feed.pushSecret,
        capDoc({ identifier: 'CRASH1C', msgType: 'Cancel', references: 'w-nws.webmaster@noaa.gov,CRASH1,2026-06-01T04:55:01-07:00' }),
      )
      t.match(res.body.data, { state: 'cleared', emergencyId: emg.id })
      t.equal((await active()).length, 0)
    })

    await t.test('a handling interrupted before its emergency is handled again; a run outliving its lease leaves no second emergency', async (t) => {
      const emergencies = services.emergencies
      const start = emergencies.start
      let reached!: () => void
      const stalled = new Promise<void>((r) => (reached = r))
      let resume!: () => void
      const resumed = new Promise<void>((r) => (resume = r))
      // This run stalls before starting anything, and resumes after the recovery handled its document.
      emergencies.start = async (...args) => {
        emergencies.start = start
        reached()
        await resumed
        return start.apply(emergencies, args)
      }
      t.teardown(() => {
        emergencies.start = start
      })
      const slow = push(c, feed.id, feed.pushSecret, capDoc({ identifier: 'SLOW1' }))
      await guard(stalled, 'the handling of SLOW1 to reach the emergency')
      c.clock.advance(CAP_LEASE_MS)
      await services.capWorker.runOnce()
      const [emg] = await active()
      t.ok(emg, 'the recovery started the emergency')
      t.match(await logRow(emg.source.alertId), { identifier: 'SLOW1', state: 'started', emergencyId: emg.id })
      await device.next((s) => s.emergency?.id === emg.id, GUARD)

      resume()
      const late = await guard(slow, 'the slow push to answer')
      t.equal(late.status, 202)
      t.same(late.body.data, { alertId: emg.source.alertId, state: 'started', emergencyId: emg.id }, 'the slow run answers what the recovery did')
      t.same(
        (await active()).map((e) => e.id),
        [emg.id],
        'the slow run cleared the second emergency it started',
      )
    })

    await t.test('deleting a feed clears the emergencies its alerts hold', async (t) => {
      const other = (await c.call('POST', '/v1/emergencies', { contentKind: 'media', contentId: 'med_map', scopeKind: 'all' })).body.data
      const [fromFeed] = (await active()).filter((e) => e.source?.capFeedId === feed.id)
      t.ok(fromFeed, 'the feed holds an emergency')
      const res = await c.call('DELETE', `/v1/cap-feeds/${feed.id}`)
      t.equal(res.status, 200)
      t.same(res.body.data, { id: feed.id, deleted: true, emergenciesCleared: 1 })
      t.same(
        (await active()).map((e) => e.id),
        [other.id],
        'the hand-started emergency stays; the feed’s is cleared',
      )
      t.equal((await c.call('GET', `/v1/emergencies/${fromFeed.id}`)).body.data.status, 'cleared')
      await device.next((s) => s.emergency?.id === other.id, GUARD)
    })
  })
}
