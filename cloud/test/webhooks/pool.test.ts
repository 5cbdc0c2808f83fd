// The delivery worker's connection pool and batches: keep-alive connections reused per
// endpoint origin, every connection the pool opens put through the guard's connect-time
// checks, at most ENDPOINT_CONCURRENCY requests in flight to one endpoint (or the setting's number), and a batch's
// outcomes recorded together (endpoint failure count, switch-off). Real HTTPS receivers.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import dns from 'node:dns'
import fs from 'node:fs'
import https from 'node:https'
import path from 'node:path'
import { ManualClock } from '../../src/platform/clock.js'
import { OutboundGuard, type LookupFn } from '../../src/platform/net/OutboundGuard.js'
import { AUTO_DISABLE_AFTER, ENDPOINT_CONCURRENCY } from '../../src/domains/webhooks/model.js'
import { CA_FILE, TLS_DIR, startReceiver } from '../fixtures/receiver.js'
import { forEngines } from '../db/engines.js'
import { recordEvent } from '../fixtures/events.js'
import { until } from '../fixtures/processes.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

function countingLookup(): { lookup: LookupFn; hosts: string[] } {
  const hosts: string[] = []
  const lookup: LookupFn = (host, opts, cb) => {
    hosts.push(host)
    ;(dns.lookup as unknown as LookupFn)(host, opts, cb)
  }
  return { lookup, hosts }
}

t.test('a pool reuses keep-alive connections and puts every new one through the connect-time checks', async (t) => {
  let close = false
  const receiver = await startReceiver(() => ({ status: 200, headers: close ? { connection: 'close' } : ({} as Record<string, string>) }))
  t.after(() => receiver.close())
  const { lookup, hosts } = countingLookup()
  const guard = new OutboundGuard({ allowHosts: ['localhost'], caFile: CA_FILE, lookup, timeoutMs: HANG_GUARD_MS })
  t.after(() => guard.close())
  const pool = guard.pool(4)

  for (let i = 0; i < 10; i++) t.equal((await guard.request(receiver.url, { body: '{}', dispatcher: pool })).status, 200)
  // (undici opens a second connection right after the first exchange; from then on both are reused.)
  t.ok(receiver.connections <= 2, `ten requests in a row over ${receiver.connections} connection(s)`)
  t.equal(hosts.length, receiver.connections, 'one guarded lookup per connection')

  close = true
  const before = receiver.connections
  for (let i = 0; i < 4; i++) await guard.request(receiver.url, { body: '{}', dispatcher: pool })
  t.ok(receiver.connections >= before + 2, `the receiver closed each: new connections (${receiver.connections - before})`)
  t.equal(hosts.length, receiver.connections, 'each new connection ran the guarded lookup')

  await t.rejects(guard.request(receiver.url, { body: '{}', dispatcher: new (await import('undici')).Agent() as never }), /not a pool of this guard/)
})

t.test("post(): the worker's lean POST answers the status, keeps the 64 KiB answer limit and the whole-request time limit", async (t) => {
  const big = 'x'.repeat(70 * 1024)
  const server = https.createServer(
    { key: fs.readFileSync(path.join(TLS_DIR, 'server-key.pem')), cert: fs.readFileSync(path.join(TLS_DIR, 'server.pem')) },
    (req, res) => {
      req.resume()
      req.on('end', () => {
        if (req.url === '/big') res.writeHead(200).end(big)
        else if (req.url === '/hold')
          res.writeHead(200).write('partial') // never ends
        else res.writeHead(req.url === '/teapot' ? 418 : 204).end()
      })
    },
  )
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  const base = `https://localhost:${(server.address() as import('node:net').AddressInfo).port}`
  // The limit under test (/hold never ends its body). The answered requests share the guard,
  // so it is seconds: a busy machine answers /ok well within it.
  const HOLD_LIMIT_MS = 5000
  const guard = new OutboundGuard({ allowHosts: ['localhost'], caFile: CA_FILE, timeoutMs: HOLD_LIMIT_MS })
  t.after(() => guard.close())
  const pool = guard.pool(4)
  const post = (p: string) => guard.post(`${base}${p}`, { headers: { 'content-type': 'application/json' }, body: '{}', dispatcher: pool })
  t.equal(await post('/ok'), 204)
  t.equal(await post('/teapot'), 418)
  await t.rejects(post('/big'), /response larger than 65536 bytes/)
  await t.rejects(post('/hold'), { name: 'TimeoutError' }, 'a body that never ends runs out of time (the time limit ends it)')
  t.equal(await post('/ok'), 204, 'the pool still works after an aborted request')
  await t.rejects(guard.post(`${base}/ok`, { headers: {}, body: '{}', dispatcher: new (await import('undici')).Agent() as never }), /not a pool of this guard/)
  await t.rejects(guard.post('http://localhost/ok', { headers: {}, body: '{}', dispatcher: pool }), /only https/)
})

forEngines(t, (t, build) => {
  async function setup(t: Parameters<Parameters<typeof forEngines>[1]>[0], answer: Parameters<typeof startReceiver>[0], webhookEndpointConcurrency?: number) {
    const receiver = await startReceiver(answer)
    t.after(() => receiver.close())
    const extra = webhookEndpointConcurrency ? { webhookEndpointConcurrency } : {}
    const h = await build(t, { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE, ...extra }, { clock: new ManualClock(Date.now()) })
    const { apiKey, workspaceId } = await h.workspace()
    const res = await h.req('POST', '/v1/webhooks', apiKey, { url: receiver.url, events: ['screen.offline'] })
    t.equal(res.statusCode, 201)
    const publish = (n: number) =>
      recordEvent(
        servicesOf(h.app),
        Array.from({ length: n }, (_, i) => ({ event: 'screen.offline' as const, workspaceId, occurredAt: h.clock.now().toISOString(), data: { i } })),
      )
    return { h, receiver, apiKey, endpointId: res.json().data.id as string, publish }
  }

  t.test('at most ENDPOINT_CONCURRENCY requests in flight to one endpoint; the rest go when one ends', async (t) => {
    let hold = true
    const { h, receiver, apiKey, publish } = await setup(t, () => (hold ? 'hold' : { status: 200 }))
    const n = ENDPOINT_CONCURRENCY + 9
    await publish(n)
    const run = servicesOf(h.app).webhookWorker.runOnce()
    await receiver.waitFor(ENDPOINT_CONCURRENCY)
    await new Promise((r) => setTimeout(r, 300))
    t.equal(receiver.received.length, ENDPOINT_CONCURRENCY, 'the others wait')
    t.ok(receiver.connections <= ENDPOINT_CONCURRENCY, `${receiver.connections} connections`)
    hold = false
    receiver.release()
    await run
    t.equal(receiver.received.length, n)
    t.equal(new Set(receiver.received.map((r) => r.body.deliveryId)).size, n, 'each delivery once')
    const log = (await h.req('GET', '/v1/webhooks/deliveries?limit=100', apiKey)).json().data as { status: string; attempts: number }[]
    t.equal(log.length, n)
    t.ok(
      log.every((d) => d.status === 'delivered' && d.attempts === 1),
      'all delivered on their first attempt',
    )
  })

  t.test('the setting (SVC_WEBHOOK_ENDPOINT_CONCURRENCY) bounds the requests in flight and the connections to one endpoint', async (t) => {
    for (const limit of [3, ENDPOINT_CONCURRENCY + 8]) {
      await t.test(`${limit} at most`, async (t) => {
        let hold = true
        const { h, receiver, publish } = await setup(t, () => (hold ? 'hold' : { status: 200 }), limit)
        t.equal(servicesOf(h.app).webhookSender.endpointConcurrency, limit)
        const n = limit + 5
        await publish(n)
        const run = servicesOf(h.app).webhookWorker.runOnce()
        await receiver.waitFor(limit)
        await new Promise((r) => setTimeout(r, 300))
        t.equal(receiver.received.length, limit, 'the others wait')
        t.ok(receiver.connections <= limit, `${receiver.connections} connections`)
        hold = false
        receiver.release()
        await run
        t.equal(new Set(receiver.received.map((r) => r.body.deliveryId)).size, n, 'each delivery once')
      })
    }
  })

  t.test('deliveries waiting behind a slow endpoint keep their lease: no later claim takes them while this process works on them', async (t) => {
    let hold = true
    const receiver = await startReceiver(() => (hold ? 'hold' : { status: 200 }))
    t.after(() => receiver.close())
    const h = await build(t, { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE, webhookLeaseMs: 300 }, { clock: new ManualClock(Date.now()) })
    const { apiKey, workspaceId } = await h.workspace()
    t.equal((await h.req('POST', '/v1/webhooks', apiKey, { url: receiver.url, events: ['screen.offline'] })).statusCode, 201)
    const n = ENDPOINT_CONCURRENCY + 4
    for (let i = 0; i < n; i++)
      await recordEvent(servicesOf(h.app), { event: 'screen.offline', workspaceId, occurredAt: h.clock.now().toISOString(), data: { i } })
    const run = servicesOf(h.app).webhookWorker.runOnce()
    await receiver.waitFor(ENDPOINT_CONCURRENCY)
    h.clock.advance(5_000) // far past the 300 ms lease the claim was taken with
    // Renewed every 100 ms meanwhile: wait until every claimed row's lease runs past the moved clock.
    const renewed = async () => {
      const rows = await servicesOf(h.app).db.kysely.selectFrom('webhook_deliveries').select('claimed_until').where('claim_token', 'is not', null).execute()
      return rows.length === n && rows.every((r) => r.claimed_until !== null && Date.parse(r.claimed_until) > h.clock.now().getTime()) ? true : undefined
    }
    t.ok(await until(5 * 60_000, renewed, 10), 'the leases were renewed after the clock moved')
    t.same(await servicesOf(h.app).webhookQueue.claimDue(100), [], 'every claimed delivery is still under its (renewed) lease')
    hold = false
    receiver.release()
    await run
    t.equal(receiver.received.length, n, 'each sent once')
    const log = (await h.req('GET', '/v1/webhooks/deliveries?limit=100', apiKey)).json().data as { status: string; attempts: number }[]
    t.ok(
      log.every((d) => d.status === 'delivered' && d.attempts === 1),
      'all delivered on their first attempt',
    )
  })

  t.test('a slow endpoint does not hold up deliveries queued after its batch was claimed', async (t) => {
    const slow = await startReceiver(() => 'hold')
    t.after(() => slow.close())
    const fast = await startReceiver()
    t.after(() => fast.close())
    const h = await build(t, { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE }, { clock: new ManualClock(Date.now()) })
    const { apiKey, workspaceId } = await h.workspace()
    t.equal((await h.req('POST', '/v1/webhooks', apiKey, { url: slow.url, events: ['content.recalled'] })).statusCode, 201)
    t.equal((await h.req('POST', '/v1/webhooks', apiKey, { url: fast.url, events: ['screen.offline'] })).statusCode, 201)
    const event = (name: 'content.recalled' | 'screen.offline', i: number) =>
      recordEvent(servicesOf(h.app), { event: name, workspaceId, occurredAt: h.clock.now().toISOString(), data: { i } })
    await event('content.recalled', 1)
    await event('content.recalled', 2)
    const first = servicesOf(h.app).webhookWorker.runOnce()
    await slow.waitFor(2)
    for (let i = 0; i < 3; i++) await event('screen.offline', i)
    const second = servicesOf(h.app).webhookWorker.runOnce()
    await fast.waitFor(3)
    t.equal(fast.received.length, 3, 'sent while the first batch is still held (the time limit is 10 s)')
    t.equal(slow.received.length, 2)
    slow.release(200)
    await Promise.all([first, second])
    const log = (await h.req('GET', '/v1/webhooks/deliveries?limit=100', apiKey)).json().data as { status: string }[]
    t.equal(log.length, 5)
    t.ok(log.every((d) => d.status === 'delivered'))
  })

  t.test('a batch of failures counts each against the endpoint; a success in a later batch resets the count', async (t) => {
    let status = 500
    const { h, receiver, apiKey, endpointId, publish } = await setup(t, () => ({ status }))
    await publish(3)
    await servicesOf(h.app).webhookWorker.runOnce()
    t.equal(receiver.received.length, 3)
    let ep = (await h.req('GET', `/v1/webhooks/${endpointId}`, apiKey)).json().data
    t.equal(ep.consecutiveFailures, 3)
    t.equal(ep.lastStatus, 500)
    t.equal(ep.enabled, true)

    status = 204
    await publish(2)
    await servicesOf(h.app).webhookWorker.runOnce()
    ep = (await h.req('GET', `/v1/webhooks/${endpointId}`, apiKey)).json().data
    t.equal(ep.consecutiveFailures, 0)
    t.equal(ep.lastStatus, 204)

    // Enough failures in one batch switch the endpoint off, once, and its Owners are mailed.
    status = 503
    await publish(AUTO_DISABLE_AFTER + 2)
    await servicesOf(h.app).webhookWorker.runOnce()
    ep = (await h.req('GET', `/v1/webhooks/${endpointId}`, apiKey)).json().data
    t.equal(ep.enabled, false)
    t.equal(ep.consecutiveFailures, AUTO_DISABLE_AFTER + 2)
    t.match(ep.autoDisabledReason, /failed in a row/)
    const failed = (await h.req('GET', '/v1/webhooks/deliveries?status=failed&limit=100', apiKey)).json().data as { error: string }[]
    t.equal(failed.length, 3 + AUTO_DISABLE_AFTER + 2)
    t.ok(failed.every((d) => d.error === 'http 500' || d.error === 'http 503'))
  })

  t.test('a batch to a name that resolves to a private address: every delivery refused at connect time', async (t) => {
    const lookup: LookupFn = (_host, _opts, cb) => cb(null, [{ address: '10.0.0.7', family: 4 }])
    const outbound = new OutboundGuard({ lookup, timeoutMs: HANG_GUARD_MS })
    const h = await build(t, {}, { outbound })
    const { apiKey, workspaceId } = await h.workspace()
    t.equal((await h.req('POST', '/v1/webhooks', apiKey, { url: 'https://hooks.example.com/in', events: ['screen.offline'] })).statusCode, 201)
    for (let i = 0; i < 6; i++) {
      await recordEvent(servicesOf(h.app), { event: 'screen.offline', workspaceId, occurredAt: h.clock.now().toISOString(), data: { i } })
    }
    await servicesOf(h.app).webhookWorker.runOnce()
    const log = (await h.req('GET', '/v1/webhooks/deliveries?status=failed', apiKey)).json().data as { error: string }[]
    t.equal(log.length, 6)
    for (const d of log) t.match(d.error, /^unsafe address: hooks\.example\.com resolves to a non-public address \(10\.0\.0\.7\)/)
  })
})
