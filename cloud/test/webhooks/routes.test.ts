// /v1/webhooks routes: answers, validation (400 bad_request / unsafe_url), permissions,
// pinned keys refused, the delivery log's paging and filters, the event catalogue.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { makeKey } from '../helpers.js'
import { CA_FILE } from '../fixtures/receiver.js'
import { forEngines } from '../db/engines.js'
import { recordEvent } from '../fixtures/events.js'

// Every test here runs on SQLite and, when SVC_TEST_DATABASE_URL is set, on PostgreSQL. The
// tests up to the purge share one app per engine, each in a workspace of its own; the purge
// counts every workspace's deliveries, so its test has an app of its own.
forEngines(t, async (t, build) => {
  const shared = await build(t)
  const URL_OK = 'https://hooks.example.com/in'

  t.test('create, list, get, patch, delete', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const res = await h.req('POST', '/v1/webhooks', apiKey, { url: URL_OK, events: ['content.recalled', 'content.recalled'], description: 'x'.repeat(250) })
    t.equal(res.statusCode, 201, res.body)
    const ep = res.json().data
    t.match(ep.id, /^whe_/)
    t.match(ep.secret, /^[0-9a-f]{64}$/)
    t.equal(ep.secretPreview, ep.secret.slice(0, 8))
    t.equal(ep.description.length, 200, 'description cut to 200')
    t.same(ep.events, ['content.recalled'])
    t.equal(ep.enabled, true)
    t.equal(ep.consecutiveFailures, 0)
    t.equal(ep.autoDisabledAt, null)
    t.equal(ep.lastStatus, null)

    const list = (await h.req('GET', '/v1/webhooks', apiKey)).json().data
    t.equal(list.length, 1)
    t.notOk('secret' in list[0], 'no secret in the list')
    t.equal(list[0].secretPreview, ep.secretPreview)
    const one = (await h.req('GET', `/v1/webhooks/${ep.id}`, apiKey)).json().data
    t.notOk('secret' in one)

    const noEvents = (await h.req('POST', '/v1/webhooks', apiKey, { url: URL_OK })).json().data
    t.same(noEvents.events, [], 'default: no events')
    t.equal(noEvents.description, null)

    const p = await h.req('PATCH', `/v1/webhooks/${ep.id}`, apiKey, { events: ['screen.offline'], enabled: false, description: '  short ' })
    t.equal(p.statusCode, 200)
    t.same(p.json().data.events, ['screen.offline'], 'events replaced')
    t.equal(p.json().data.enabled, false)
    t.equal(p.json().data.description, 'short')

    const d = await h.req('DELETE', `/v1/webhooks/${ep.id}`, apiKey)
    t.equal(d.statusCode, 200)
    t.same(d.json(), { data: { id: ep.id } }, 'data.id only')
    t.equal((await h.req('GET', `/v1/webhooks/${ep.id}`, apiKey)).statusCode, 404)
    t.equal((await h.req('DELETE', `/v1/webhooks/${ep.id}`, apiKey)).statusCode, 404)
    t.equal((await h.req('PATCH', `/v1/webhooks/${ep.id}`, apiKey, { enabled: true })).statusCode, 404)
  })

  t.test('validation answers 400 bad_request or unsafe_url, never 422', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const cases: [unknown, string][] = [
      [{}, 'bad_request'],
      [{ url: 42 }, 'bad_request'],
      [{ url: URL_OK, events: ['screen.exploded'] }, 'bad_request'],
      [{ url: URL_OK, events: 'screen.offline' }, 'bad_request'],
      [{ url: 'http://hooks.example.com/in' }, 'unsafe_url'],
      [{ url: 'https://127.0.0.1/in' }, 'unsafe_url'],
      [{ url: 'not a url' }, 'unsafe_url'],
    ]
    for (const [body, code] of cases) {
      const res = await h.req('POST', '/v1/webhooks', apiKey, body)
      t.equal(res.statusCode, 400, JSON.stringify(body))
      t.equal(res.json().error, code, JSON.stringify(body))
    }
    const ep = (await h.req('POST', '/v1/webhooks', apiKey, { url: URL_OK })).json().data
    const bad = await h.req('PATCH', `/v1/webhooks/${ep.id}`, apiKey, { events: ['nope'] })
    t.equal(bad.statusCode, 400)
    t.equal(bad.json().error, 'bad_request')
    const unsafe = await h.req('PATCH', `/v1/webhooks/${ep.id}`, apiKey, { url: 'https://localhost/x' })
    t.equal(unsafe.json().error, 'unsafe_url')
    const wrongType = await h.req('PATCH', `/v1/webhooks/${ep.id}`, apiKey, { enabled: 'yes' })
    t.equal(wrongType.statusCode, 400)
    t.equal(wrongType.json().error, 'bad_request')
  })

  t.test('permissions: integration.view reads, integration.edit changes; pinned keys refused', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const ep = (await h.req('POST', '/v1/webhooks', apiKey, { url: URL_OK, events: ['screen.offline'] })).json().data
    const viewer = await makeKey(h, apiKey, ['integration.view'])
    t.equal((await h.req('GET', '/v1/webhooks', viewer.secret)).statusCode, 200)
    t.equal((await h.req('GET', '/v1/webhooks/deliveries', viewer.secret)).statusCode, 200)
    t.equal((await h.req('GET', '/v1/webhooks/events', viewer.secret)).statusCode, 200)
    for (const [m, u] of [
      ['POST', '/v1/webhooks'],
      ['PATCH', `/v1/webhooks/${ep.id}`],
      ['DELETE', `/v1/webhooks/${ep.id}`],
      ['POST', `/v1/webhooks/${ep.id}/test`],
      ['POST', '/v1/webhooks/deliveries/whd_x/replay'],
    ] as const) {
      const res = await h.req(m, u, viewer.secret, m === 'DELETE' ? undefined : { url: URL_OK })
      t.equal(res.statusCode, 403, `${m} ${u}`)
      t.equal(res.json().message, 'Missing permission: integration.edit')
    }
    const none = await makeKey(h, apiKey, ['screen.view'])
    t.equal((await h.req('GET', '/v1/webhooks', none.secret)).json().message, 'Missing permission: integration.view')
    const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Shop' })).json().data
    const pinned = await makeKey(h, apiKey, 'all', node.id)
    for (const [m, u] of [
      ['GET', '/v1/webhooks'],
      ['POST', '/v1/webhooks'],
      ['GET', '/v1/webhooks/deliveries'],
      ['GET', '/v1/webhooks/events'],
    ] as const) {
      const res = await h.req(m, u, pinned.secret, m === 'POST' ? { url: URL_OK } : undefined)
      t.equal(res.statusCode, 403, `pinned ${m} ${u}`)
    }
    t.equal((await h.req('GET', '/v1/webhooks', null)).statusCode, 401)
  })

  t.test('event catalogue: thirteen entries', async (t) => {
    const h = shared
    const { apiKey } = await h.workspace()
    const data = (await h.req('GET', '/v1/webhooks/events', apiKey)).json().data
    t.equal(data.length, 13)
    t.same(data.map((e: { event: string }) => e.event).sort(), [
      'approval.decided',
      'approval.requested',
      'content.recalled',
      'content.restored',
      'emergency.cleared',
      'emergency.reach',
      'emergency.started',
      'screen.drifting',
      'screen.in_sync',
      'screen.offline',
      'screen.online',
      'screen.panel_mismatch',
      'screen.reported',
    ])
    for (const e of data) t.ok(e.label && e.what, e.event)
  })

  t.test('deliveries log: always paged, newest first, filters, bad limit is 400', async (t) => {
    const h = shared
    const { apiKey, workspaceId } = await h.workspace()
    const a = (await h.req('POST', '/v1/webhooks', apiKey, { url: URL_OK, events: ['content.recalled'] })).json().data
    const b = (await h.req('POST', '/v1/webhooks', apiKey, { url: 'https://other.example.com/x', events: ['content.recalled', 'content.restored'] })).json()
      .data
    for (let i = 0; i < 3; i++) {
      await recordEvent(servicesOf(h.app), {
        event: 'content.recalled',
        workspaceId,
        occurredAt: h.clock.now().toISOString(),
        data: { kind: 'media', id: `med_${i}`, name: 'Media', reason: null, recalledBy: 'x' },
      })
      h.clock.advance(1000)
    }
    await recordEvent(servicesOf(h.app), {
      event: 'content.restored',
      workspaceId,
      occurredAt: h.clock.now().toISOString(),
      data: { kind: 'media', id: 'med_0', name: 'Media' },
    })
    const all = (await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json()
    t.equal(all.data.length, 7)
    t.equal(all.nextCursor, null, 'nextCursor always present')
    const ids = all.data.map((d: { id: string }) => d.id)
    t.same(ids, [...ids].sort().reverse(), 'newest first')
    t.equal(all.data[0].event, 'content.restored')
    t.equal(all.data[0].status, 'pending')
    t.equal(all.data[0].attempts, 0)
    t.equal(all.data[0].replayOf, null)
    t.equal(all.data[0].payload.event, 'content.restored')
    t.equal(all.data[0].payload.deliveryId, all.data[0].id)

    const seen: string[] = []
    let cursor: string | null = null
    do {
      const q: string = `/v1/webhooks/deliveries?limit=3${cursor ? `&cursor=${cursor}` : ''}`
      const page = (await h.req('GET', q, apiKey)).json()
      t.ok(page.data.length <= 3)
      seen.push(...page.data.map((d: { id: string }) => d.id))
      cursor = page.nextCursor
    } while (cursor)
    t.same(seen, ids, 'pages walk the whole log')
    t.equal((await h.req('GET', `/v1/webhooks/deliveries?endpointId=${a.id}`, apiKey)).json().data.length, 3)
    t.equal((await h.req('GET', `/v1/webhooks/deliveries?endpointId=${b.id}`, apiKey)).json().data.length, 4)
    t.equal((await h.req('GET', '/v1/webhooks/deliveries?status=pending', apiKey)).json().data.length, 7)
    t.equal((await h.req('GET', '/v1/webhooks/deliveries?status=delivered', apiKey)).json().data.length, 0)
    t.equal((await h.req('GET', '/v1/webhooks/deliveries?status=bogus', apiKey)).json().data.length, 7, 'unknown status ignored')
    for (const l of ['0', '201', 'x']) {
      const res = await h.req('GET', `/v1/webhooks/deliveries?limit=${l}`, apiKey)
      t.equal(res.statusCode, 400, `limit=${l}`)
      t.equal(res.json().error, 'bad_request')
    }
    t.equal((await h.req('GET', '/v1/webhooks/deliveries?limit=200', apiKey)).statusCode, 200)

    // Another workspace sees none of it.
    const other = await h.workspace('B')
    t.same((await h.req('GET', '/v1/webhooks/deliveries', other.apiKey)).json().data, [])
    t.same((await h.req('GET', '/v1/webhooks', other.apiKey)).json().data, [])
  })

  t.test('deliveries are only queued for enabled, subscribed endpoints; the log is purged after 30 days', async (t) => {
    const h = await build(t)
    const { apiKey, workspaceId } = await h.workspace()
    const on = (await h.req('POST', '/v1/webhooks', apiKey, { url: URL_OK, events: ['screen.offline'] })).json().data
    const off = (await h.req('POST', '/v1/webhooks', apiKey, { url: URL_OK, events: ['screen.offline'] })).json().data
    await h.req('PATCH', `/v1/webhooks/${off.id}`, apiKey, { enabled: false })
    await h.req('POST', '/v1/webhooks', apiKey, { url: URL_OK, events: ['screen.online'] })
    const ids = await recordEvent(servicesOf(h.app), { event: 'screen.offline', workspaceId, occurredAt: h.clock.now().toISOString(), data: {} })
    t.equal(ids.length, 1)
    const log = (await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json().data
    t.equal(log[0].endpointId, on.id)
    h.clock.advance(29 * 24 * 3600_000)
    t.equal(await servicesOf(h.app).webhookQueue.purge(), 0)
    h.clock.advance(2 * 24 * 3600_000)
    t.equal(await servicesOf(h.app).webhookQueue.purge(), 1)
    t.same((await h.req('GET', '/v1/webhooks/deliveries', apiKey)).json().data, [])
    t.ok(CA_FILE)
  })
})
