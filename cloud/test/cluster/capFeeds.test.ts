// CAP feeds on two instances of one cloud (one database, one Redis): the same document
// pushed to both at once, and the same pull feed fetched by both workers at once, start one
// emergency; an expiry seen by both clears it once. Needs a Redis (SVC_TEST_REDIS_URL).
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import https from 'node:https'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { redis, toolTest } from '@svc/shared/testing'
import { buildApp, servicesOf } from '../../src/app.js'
import { testConfig } from '../../src/config.js'
import { ManualClock } from '../../src/platform/clock.js'
import type { Database } from '../../src/platform/db/Database.js'
import { InMemoryContentResolver } from '../../src/domains/content/testing/InMemoryContentResolver.js'
import { eachEngine } from '../db/engines.js'
import { CA_FILE, TLS_DIR } from '../fixtures/receiver.js'
import type { Harness } from '../helpers.js'
import { pairScreen } from '../screenHelpers.js'
import { capDoc } from '../cap/capDocs.js'

async function twoInstances(t: Test, db: Database) {
  const config = testConfig({
    redisUrl: process.env.SVC_TEST_REDIS_URL ?? null,
    redisPrefix: `svc-test-${randomUUID()}:`,
    webhookAllowHosts: ['localhost'],
    webhookCaFile: CA_FILE,
  })
  const clock = new ManualClock('2026-06-01T12:00:00.000Z')
  const content = new InMemoryContentResolver()
  const a = await buildApp(config, { clock, db, content })
  const b = await buildApp(config, { clock, db, content })
  t.after(async () => {
    await a.close()
    await b.close()
  })
  const ws = await servicesOf(a).workspaces.create('Shared', 'us')
  const { secret } = await servicesOf(a).apiKeys.createRoot(ws.id, ws.region, 'Owner key', 'all')
  content.add(ws.id, { kind: 'media', id: 'med_map' })
  const h: Harness = {
    app: a,
    clock,
    workspace: async () => ({ workspaceId: ws.id, apiKey: secret }),
    req: (method, url, token, body, headers = {}) =>
      a.inject({
        method: method as 'GET',
        url,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
        ...(body !== undefined ? { payload: body as object } : {}),
      }),
  }
  await pairScreen(h, secret, 'Lobby')
  return { a, b, clock, apiKey: secret, h }
}

const pushTo = (app: FastifyInstance, feedId: string, secret: string, body: string) =>
  app.inject({
    method: 'POST',
    url: `/v1/cap-feeds/${feedId}/alerts`,
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/cap+xml' },
    payload: body,
  })

toolTest(t, redis, 'the same push to both instances, and the same pull by both workers: one emergency each; expiry clears once', async (t) =>
  eachEngine(t, 'two instances', async (t, db) => {
    const c = await twoInstances(t, db)
    const feed = (await c.h.req('POST', '/v1/cap-feeds', c.apiKey, { name: 'Push', contentKind: 'media', contentId: 'med_map' })).json().data
    const doc = capDoc({ identifier: 'KSTO1055887203', expires: '2026-06-01T05:30:00-07:00' })
    const answers = await Promise.all([
      pushTo(c.a, feed.id, feed.pushSecret, doc),
      pushTo(c.b, feed.id, feed.pushSecret, doc),
      pushTo(c.a, feed.id, feed.pushSecret, doc),
    ])
    t.same(
      answers.map((r) => r.statusCode),
      [202, 202, 202],
    )
    const ids = new Set(answers.map((r) => r.json().data.alertId))
    t.equal(ids.size, 1, 'one alert')
    const emergencies = (await c.h.req('GET', '/v1/emergencies', c.apiKey)).json().data
    t.equal(emergencies.length, 1, 'one emergency')

    // Both instances see the expiry at once: cleared once (one emergency.cleared event).
    c.clock.advance(31 * 60_000)
    await Promise.all([servicesOf(c.a).capWorker.runOnce(), servicesOf(c.b).capWorker.runOnce()])
    t.equal((await c.h.req('GET', `/v1/emergencies/${emergencies[0].id}`, c.apiKey)).json().data.status, 'cleared')
    const log = (await c.h.req('GET', `/v1/cap-feeds/${feed.id}/alerts`, c.apiKey)).json().data
    t.same(
      log.map((r: any) => r.state),
      ['expired'],
    )

    // A pull feed fetched by both workers at once: one fetch, one emergency.
    let fetches = 0
    const server = https.createServer(
      { key: fs.readFileSync(path.join(TLS_DIR, 'server-key.pem')), cert: fs.readFileSync(path.join(TLS_DIR, 'server.pem')) },
      (_req, res) => {
        fetches++
        res.writeHead(200, { 'content-type': 'application/cap+xml' }).end(capDoc({ identifier: 'KSTO2' }))
      },
    )
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    t.after(() => {
      server.closeAllConnections()
      return new Promise<void>((r) => server.close(() => r()))
    })
    const url = `https://localhost:${(server.address() as AddressInfo).port}/alert.xml`
    const pull = (await c.h.req('POST', '/v1/cap-feeds', c.apiKey, { name: 'Pull', mode: 'pull', url, contentKind: 'media', contentId: 'med_map' })).json().data
    await Promise.all([servicesOf(c.a).capWorker.runOnce(), servicesOf(c.b).capWorker.runOnce()])
    t.equal(fetches, 1, 'fetched by one instance')
    t.equal((await c.h.req('GET', '/v1/emergencies?status=active', c.apiKey)).json().data.length, 1)
    t.match((await c.h.req('GET', `/v1/cap-feeds/${pull.id}/alerts`, c.apiKey)).json().data, [{ identifier: 'KSTO2', state: 'started' }])
  }),
)
