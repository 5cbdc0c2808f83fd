// The delivery engine against a REAL HTTPS receiver on 127.0.0.1 (test CA, `localhost`
// let through the public-address rule): signatures checked with Stripe's independent
// verifier, the whole backoff ladder, abandonment after nine attempts, auto-disable after
// nine failures in a row with the Owners mailed, test and replay. Time is a ManualClock.
import { servicesOf } from '../../src/app.js'
import t, { type Test } from 'tap'
import Stripe from 'stripe'
import type { Harness } from '../helpers.js'
import { ManualClock } from '../../src/platform/clock.js'
import { BACKOFF_MS } from '../../src/domains/webhooks/model.js'
import { OutboundGuard } from '../../src/platform/net/OutboundGuard.js'
import { CA_FILE, startReceiver, type Receiver, type Received } from '../fixtures/receiver.js'
import { forEngines } from '../db/engines.js'
import { recordEvent } from '../fixtures/events.js'

// Every test here runs on SQLite and, when SVC_TEST_DATABASE_URL is set, on PostgreSQL.
forEngines(t, (t, build) => {
  async function setup(t: Test) {
    const receiver = await startReceiver()
    t.after(() => receiver.close())
    // Start near real time so TLS and signature timestamps look current.
    const h = await build(t, { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE }, { clock: new ManualClock(Date.now()) })
    const { apiKey, workspaceId } = await h.workspace()
    return { h, receiver, apiKey, workspaceId }
  }

  function verify(h: Harness, r: Received, secret: string): boolean {
    return Stripe.webhooks.signature!.verifyHeader(r.raw, r.headers['svc-signature'] as string, secret, 300, undefined, h.clock.now().getTime())
  }

  async function endpoint(h: Harness, apiKey: string, receiver: Receiver, events = ['content.recalled', 'screen.offline']) {
    const res = await h.req('POST', '/v1/webhooks', apiKey, { url: receiver.url, events })
    if (res.statusCode !== 201) throw new Error(res.body)
    return res.json().data as { id: string; secret: string }
  }

  const recalled = (h: Harness, workspaceId: string) =>
    recordEvent(servicesOf(h.app), {
      event: 'content.recalled',
      workspaceId,
      occurredAt: h.clock.now().toISOString(),
      data: { kind: 'playlist', id: 'pl_1', name: 'Playlist', reason: 'typo', recalledBy: 'apikey:key_1' },
    })

  t.test('a published event reaches the receiver signed, with the documented headers and body', async (t) => {
    const { h, receiver, apiKey, workspaceId } = await setup(t)
    const ep = await endpoint(h, apiKey, receiver)
    await recalled(h, workspaceId)
    await servicesOf(h.app).webhookWorker.runOnce()
    t.equal(receiver.received.length, 1)
    const r = receiver.received[0]!
    t.equal(r.headers['content-type'], 'application/json')
    t.equal(r.headers['user-agent'], 'Svc-Webhooks/1')
    t.equal(r.headers['x-svc-event'], 'content.recalled')
    t.match(r.headers['svc-signature'], /^t=\d+,v1=[0-9a-f]{64}$/)
    t.ok(verify(h, r, ep.secret), 'Stripe verifier accepts the signature')
    t.throws(() => verify(h, r, 'f'.repeat(64)), 'a wrong secret fails')
    t.throws(
      () => Stripe.webhooks.signature!.verifyHeader(`${r.raw} `, r.headers['svc-signature'] as string, ep.secret, 300, undefined, h.clock.now().getTime()),
      'a changed body fails',
    )
    t.same(Object.keys(r.body).sort(), ['attempt', 'data', 'deliveryId', 'event', 'occurredAt', 'workspaceId'])
    t.equal(r.body.attempt, 1)
    t.equal(r.body.workspaceId, workspaceId)
    t.same(r.body.data, { kind: 'playlist', id: 'pl_1', name: 'Playlist', reason: 'typo', recalledBy: 'apikey:key_1' })
    const d = (await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json().data[0]
    t.equal(d.id, r.body.deliveryId)
    t.equal(d.status, 'delivered')
    t.equal(d.attempts, 1)
    t.equal(d.responseStatus, 200)
    t.equal(d.nextAttemptAt, null)
    t.ok(d.deliveredAt)
    t.same(d.payload, r.body, 'payload is the body as sent')
    const e = (await h.req('GET', `/v1/webhooks/${ep.id}`, apiKey)).json().data
    t.equal(e.lastStatus, 200)
    t.ok(e.lastDeliveryAt)
  })

  t.test('the whole backoff ladder, then abandoned after nine attempts; same deliveryId throughout', async (t) => {
    const { h, receiver, apiKey, workspaceId } = await setup(t)
    receiver.answer = () => ({ status: 500 })
    const ep = await endpoint(h, apiKey, receiver)
    await recalled(h, workspaceId)
    const worker = servicesOf(h.app).webhookWorker
    await worker.runOnce()
    const waits: number[] = []
    for (let attempt = 1; attempt < 9; attempt++) {
      const d = (await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json().data[0]
      t.equal(d.status, 'failed', `after attempt ${attempt}`)
      t.equal(d.attempts, attempt)
      t.equal(d.error, 'http 500')
      t.equal(d.responseStatus, 500)
      const wait = Date.parse(d.nextAttemptAt) - h.clock.now().getTime()
      waits.push(wait)
      h.clock.advance(wait - 1000)
      await worker.runOnce()
      t.equal(receiver.received.length, attempt, 'not retried before the wait is over')
      h.clock.advance(1000)
      await worker.runOnce()
      t.equal(receiver.received.length, attempt + 1, `attempt ${attempt + 1} sent`)
    }
    t.same(waits, [...BACKOFF_MS], '30 s, 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 4 h')
    t.same(waits, [30_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000])
    const d = (await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json().data[0]
    t.equal(d.status, 'abandoned')
    t.equal(d.attempts, 9)
    t.equal(d.nextAttemptAt, null)
    h.clock.advance(24 * 3600_000)
    await worker.runOnce()
    t.equal(receiver.received.length, 9, 'no tenth attempt')
    t.same(
      receiver.received.map((r) => r.body.attempt),
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    )
    t.equal(new Set(receiver.received.map((r) => r.body.deliveryId)).size, 1, 'same deliveryId across retries')
    // Each checked as at its arrival (the clock has moved on since).
    for (const r of receiver.received) {
      const sentAt = Number(/t=(\d+)/.exec(r.headers['svc-signature'] as string)![1]) * 1000
      t.ok(Stripe.webhooks.signature!.verifyHeader(r.raw, r.headers['svc-signature'] as string, ep.secret, 300, undefined, sentAt + 1000))
    }
  })

  t.test('nine failures in a row switch the endpoint off and mail the Owners; enabled: true resets', async (t) => {
    const { h, receiver, apiKey, workspaceId } = await setup(t)
    await servicesOf(h.app).users.create(workspaceId, { email: 'owner@example.com', role: 'owner' })
    await servicesOf(h.app).users.create(workspaceId, { email: 'second-owner@example.com', role: 'owner' })
    await servicesOf(h.app).users.create(workspaceId, { email: 'editor@example.com', role: 'editor' })
    let fail = true
    receiver.answer = () => ({ status: fail ? 503 : 204 })
    const ep = await endpoint(h, apiKey, receiver)
    const worker = servicesOf(h.app).webhookWorker
    // One success between failures resets the count.
    for (let i = 0; i < 5; i++) await recalled(h, workspaceId)
    await worker.runOnce()
    t.equal((await h.req('GET', `/v1/webhooks/${ep.id}`, apiKey)).json().data.consecutiveFailures, 5)
    fail = false
    await recalled(h, workspaceId)
    await worker.runOnce()
    t.equal((await h.req('GET', `/v1/webhooks/${ep.id}`, apiKey)).json().data.consecutiveFailures, 0, 'a delivery resets the count')
    t.equal((await h.req('GET', `/v1/webhooks/${ep.id}`, apiKey)).json().data.lastStatus, 204)
    fail = true
    h.clock.advance(60_000) // the earlier five retry now and fail again
    for (let i = 0; i < 4; i++) await recalled(h, workspaceId)
    await worker.runOnce()
    const e = (await h.req('GET', `/v1/webhooks/${ep.id}`, apiKey)).json().data
    t.equal(e.enabled, false, 'switched off')
    t.ok(e.autoDisabledAt)
    t.match(e.autoDisabledReason, /9 deliveries failed in a row/)
    t.ok(e.consecutiveFailures >= 9)
    t.equal(e.lastStatus, 503)
    const mail = await servicesOf(h.app).mailer.outbox(workspaceId)
    t.equal(mail.length, 1, 'one mail')
    t.same(JSON.parse(mail[0]!.to_addresses).sort(), ['owner@example.com', 'second-owner@example.com'], 'to the Owners only')
    t.match(mail[0]!.body, ep.id)
    t.equal(mail[0]!.sent_at, null, 'no SMTP configured: kept in the outbox')

    // While off: nothing new is queued, due retries are abandoned, test answers 409.
    const before = receiver.received.length
    await recalled(h, workspaceId)
    h.clock.advance(3600_000)
    await worker.runOnce()
    t.equal(receiver.received.length, before, 'nothing sent while off')
    const pending = (await h.req('GET', '/v1/webhooks/deliveries?status=failed', apiKey)).json().data
    t.equal(pending.length, 0, 'retries of a switched-off endpoint are abandoned')
    const test = await h.req('POST', `/v1/webhooks/${ep.id}/test`, apiKey)
    t.equal(test.statusCode, 409)
    t.equal(test.json().error, 'not_subscribed')

    const on = (await h.req('PATCH', `/v1/webhooks/${ep.id}`, apiKey, { enabled: true })).json().data
    t.equal(on.enabled, true)
    t.equal(on.autoDisabledAt, null)
    t.equal(on.autoDisabledReason, null)
    t.equal(on.consecutiveFailures, 0)
    fail = false
    await recalled(h, workspaceId)
    await worker.runOnce()
    t.equal(receiver.received.length, before + 1)
  })

  t.test('test delivery: real signed screen.offline with data.test; 409 when not subscribed', async (t) => {
    const { h, receiver, apiKey } = await setup(t)
    const ep = await endpoint(h, apiKey, receiver)
    const res = await h.req('POST', `/v1/webhooks/${ep.id}/test`, apiKey)
    t.equal(res.statusCode, 200)
    const out = res.json().data
    t.match(out.deliveryId, /^whd_/)
    t.equal(out.ok, true)
    t.equal(out.status, 200)
    t.equal(out.error, null)
    const r = receiver.received[0]!
    t.equal(r.headers['x-svc-event'], 'screen.offline')
    t.equal(r.body.event, 'screen.offline')
    t.equal(r.body.deliveryId, out.deliveryId)
    t.equal((r.body.data as { test: boolean }).test, true)
    t.type((r.body.data as { note: string }).note, 'string')
    t.ok(verify(h, r, ep.secret))

    receiver.answer = () => ({ status: 500 })
    const failed = (await h.req('POST', `/v1/webhooks/${ep.id}/test`, apiKey)).json().data
    t.same({ ok: failed.ok, status: failed.status, error: failed.error }, { ok: false, status: 500, error: 'http 500' }, 'a failed send is 200 with ok false')
    receiver.answer = () => ({ status: 302, headers: { location: 'https://localhost/elsewhere' } })
    const redirected = (await h.req('POST', `/v1/webhooks/${ep.id}/test`, apiKey)).json().data
    t.equal(redirected.ok, false, 'redirects are not followed')
    t.equal(redirected.status, 302)
    t.match(redirected.error, /http 302/)

    const other = await endpoint(h, apiKey, receiver, ['content.recalled'])
    const ns = await h.req('POST', `/v1/webhooks/${other.id}/test`, apiKey)
    t.equal(ns.statusCode, 409)
    t.equal(ns.json().error, 'not_subscribed')
    t.equal((await h.req('POST', '/v1/webhooks/whe_nope/test', apiKey)).statusCode, 404)

    // A receiver that is down: ok false with a connection error.
    await receiver.close()
    const down = (await h.req('POST', `/v1/webhooks/${ep.id}/test`, apiKey)).json().data
    t.equal(down.ok, false)
    t.equal(down.status, null)
    t.match(down.error, /connection failed/)
  })

  t.test('replay: a new delivery with replayOf; the original is unchanged', async (t) => {
    const { h, receiver, apiKey, workspaceId } = await setup(t)
    const ep = await endpoint(h, apiKey, receiver)
    await recalled(h, workspaceId)
    await servicesOf(h.app).webhookWorker.runOnce()
    const orig = (await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json().data[0]
    h.clock.advance(5000)
    const res = await h.req('POST', `/v1/webhooks/deliveries/${orig.id}/replay`, apiKey)
    t.equal(res.statusCode, 200)
    const out = res.json().data
    t.not(out.deliveryId, orig.id)
    t.equal(out.ok, true)
    t.equal(out.status, 200)
    const r = receiver.received[1]!
    t.equal(r.body.deliveryId, out.deliveryId)
    t.equal(r.body.replayOf, orig.id)
    t.equal(r.body.occurredAt, orig.occurredAt, 'when the event happened, not when replayed')
    t.same(r.body.data, receiver.received[0]!.body.data)
    t.ok(verify(h, r, ep.secret))
    const log = (await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json().data
    t.equal(log.length, 2)
    t.equal(log[0].replayOf, orig.id)
    t.same(log[1], orig, 'original record unchanged')
    t.equal((await h.req('POST', '/v1/webhooks/deliveries/whd_nope/replay', apiKey)).statusCode, 404)
  })

  t.test('deleting an endpoint abandons its pending deliveries', async (t) => {
    const { h, receiver, apiKey, workspaceId } = await setup(t)
    receiver.answer = () => ({ status: 500 })
    const ep = await endpoint(h, apiKey, receiver)
    await recalled(h, workspaceId)
    await recalled(h, workspaceId)
    await servicesOf(h.app).webhookWorker.runOnce()
    await recalled(h, workspaceId)
    await h.req('DELETE', `/v1/webhooks/${ep.id}`, apiKey)
    const log = (await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json().data
    t.equal(log.length, 3)
    for (const d of log) {
      t.equal(d.status, 'abandoned')
      t.equal(d.error, 'endpoint deleted')
      t.equal(d.nextAttemptAt, null)
    }
    h.clock.advance(3600_000)
    await servicesOf(h.app).webhookWorker.runOnce()
    t.equal(receiver.received.length, 2)
  })

  t.test('with a running worker, publish is delivered without waiting for the interval', async (t) => {
    const receiver = await startReceiver()
    t.after(() => receiver.close())
    const h = await build(t, { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE, webhookIntervalMs: 60_000 }, { clock: new ManualClock(Date.now()) })
    const { apiKey, workspaceId } = await h.workspace()
    await endpoint(h, apiKey, receiver)
    await recalled(h, workspaceId)
    await receiver.waitFor(1)
    t.equal(receiver.received.length, 1, 'kicked right after the insert')
  })

  t.test('a receiver that does not answer within the time limit is a failure (timeout)', async (t) => {
    const receiver = await startReceiver(() => 'hold')
    t.after(() => receiver.close())
    // The production limit is 10 s; a guard with a shorter one keeps the test fast.
    const HOLD_TIMEOUT_MS = 300 // the limit under test: the receiver never answers
    const outbound = new OutboundGuard({ allowHosts: ['localhost'], caFile: CA_FILE, timeoutMs: HOLD_TIMEOUT_MS })
    const h = await build(t, {}, { clock: new ManualClock(Date.now()), outbound })
    const { apiKey } = await h.workspace()
    const ep = await endpoint(h, apiKey, receiver)
    const out = (await h.req('POST', `/v1/webhooks/${ep.id}/test`, apiKey)).json().data
    t.equal(out.ok, false)
    t.equal(out.status, null)
    t.match(out.error, /^timeout/)
    const d = (await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json().data[0]
    t.equal(d.status, 'failed')
    t.equal(Date.parse(d.nextAttemptAt) - h.clock.now().getTime(), 30_000)
  })

  t.test('a result written after the claim was lost (lease ran out, claimed again) is ignored', async (t) => {
    const { h, receiver, apiKey, workspaceId } = await setup(t)
    const ep = await endpoint(h, apiKey, receiver)
    await recalled(h, workspaceId)
    const svc = servicesOf(h.app).webhookQueue
    const [first] = await svc.claimDue(10)
    t.same(await svc.claimDue(10), [], 'held while the lease lasts')
    h.clock.advance(servicesOf(h.app).config.webhookLeaseMs + 1)
    const [second] = await svc.claimDue(10)
    t.equal(second!.id, first!.id, 'claimed again after the lease')
    receiver.answer = () => ({ status: 500 })
    await servicesOf(h.app).webhookSender.attempt(first!)
    let d = (await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json().data[0]
    t.equal(d.status, 'pending', 'the stale claim wrote nothing')
    t.equal((await h.req('GET', `/v1/webhooks/${ep.id}`, apiKey)).json().data.consecutiveFailures, 0, 'nor counted a failure')
    receiver.answer = () => ({ status: 200 })
    await servicesOf(h.app).webhookSender.attempt(second!)
    d = (await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json().data[0]
    t.equal(d.status, 'delivered')
    t.equal(receiver.received.length, 2, 'at least once: both sends reached the receiver')
    t.equal(receiver.received[0]!.body.deliveryId, receiver.received[1]!.body.deliveryId, 'with the same deliveryId to de-duplicate on')
  })
})
