// Versioning (SPEC "Versioning" 3): retiring routes are listed at GET /v1/status/deprecations
// and their responses carry Deprecation (RFC 9745) and Sunset (RFC 8594) headers.
import t from 'tap'
import { build } from '../helpers.js'
import { testConfig } from '../../src/config.js'
import type { Deprecation } from '../../src/platform/http/deprecations.js'

const limits: Deprecation = {
  route: 'GET /v1/account/limits',
  announced: '2026-05-01',
  sunset: '2026-09-01',
  replacement: 'GET /v1/account',
  why: 'Limits are part of the account object now.',
}

t.test('the default registry is empty', async (t) => {
  const h = await build(t)
  const res = await h.req('GET', '/v1/status/deprecations', null)
  t.equal(res.statusCode, 200)
  const d = res.json().data
  t.equal(d.noticeDays, 90)
  t.type(d.policy, 'string')
  t.ok(d.policy.length > 20)
  t.match(d.policy, /90 days/)
  t.same(d.deprecations, [])
  // no route carries the headers
  const { apiKey } = await h.workspace()
  for (const url of ['/v1/account/limits', '/v1/me', '/v1/status']) {
    const r = await h.req('GET', url, apiKey)
    t.equal(r.statusCode, 200, url)
    t.notOk(r.headers.deprecation, url)
    t.notOk(r.headers.sunset, url)
  }
})

t.test('a retiring route is listed and its calls carry Deprecation and Sunset', async (t) => {
  const h = await build(t, {}, { deprecations: [limits] })
  const res = await h.req('GET', '/v1/status/deprecations', 'not-a-credential')
  t.equal(res.statusCode, 200)
  t.same(res.json().data.deprecations, [{ ...limits, noticeDays: 123 }])

  const { apiKey } = await h.workspace()
  const deprecation = `@${Date.UTC(2026, 4, 1) / 1000}`
  t.equal(deprecation, '@1777593600')
  const sunset = 'Tue, 01 Sep 2026 00:00:00 GMT'

  const ok = await h.req('GET', '/v1/account/limits', apiKey)
  t.equal(ok.statusCode, 200)
  t.equal(ok.headers.deprecation, deprecation)
  t.equal(ok.headers.sunset, sunset)
  t.match(ok.headers.link, /successor-version/)

  const head = await h.req('HEAD', '/v1/account/limits', apiKey)
  t.equal(head.statusCode, 200)
  t.equal(head.headers.deprecation, deprecation, 'HEAD of a retiring GET route too')
  t.equal(head.headers.sunset, sunset)

  // even a refused call says the route is retiring
  for (const token of [null, 'garbage']) {
    const denied = await h.req('GET', '/v1/account/limits', token)
    t.equal(denied.statusCode, 401)
    t.match(denied.json().error, /credentials/)
    t.equal(denied.headers.deprecation, deprecation)
    t.equal(denied.headers.sunset, sunset)
  }

  // other routes, and other methods on the same path, do not
  for (const [method, url] of [
    ['GET', '/v1/account'],
    ['GET', '/v1/me'],
    ['GET', '/v1/status'],
    ['GET', '/v1/status/deprecations'],
    ['POST', '/v1/account/limits'],
  ] as const) {
    const r = await h.req(method, url, apiKey)
    t.notOk(r.headers.deprecation, `${method} ${url}`)
    t.notOk(r.headers.sunset, `${method} ${url}`)
  }
})

t.test('a route without a replacement: no Link header, replacement null in the list', async (t) => {
  const h = await build(t, {}, { deprecations: [{ ...limits, replacement: null, sunset: '2026-07-30' }] })
  const { apiKey } = await h.workspace()
  const list = (await h.req('GET', '/v1/status/deprecations', null)).json().data.deprecations
  t.equal(list[0].replacement, null)
  t.equal(list[0].noticeDays, 90, 'exactly 90 days is enough')
  const res = await h.req('GET', '/v1/account/limits', apiKey)
  t.equal(res.headers.sunset, 'Thu, 30 Jul 2026 00:00:00 GMT')
  t.notOk(res.headers.link)
})

t.test('less than 90 days notice makes buildApp throw', async (t) => {
  // A refused registry must leave nothing running (an open broker would keep the process
  // alive): track the brokers buildApp makes, check none is left open, close any anyway.
  const real = await import('../../src/platform/broker/EmbeddedBroker.js')
  const made: InstanceType<typeof real.EmbeddedBroker>[] = []
  class Tracked extends real.EmbeddedBroker {
    constructor(...args: ConstructorParameters<typeof real.EmbeddedBroker>) {
      super(...args)
      made.push(this)
    }
  }
  const { buildApp: build2 } = await t.mockImport<typeof import('../../src/app.js')>('../../src/app.js', {
    '../../src/platform/broker/EmbeddedBroker.js': { ...real, EmbeddedBroker: Tracked },
  })
  t.after(() => Promise.all(made.map((b) => b.close())))
  await t.rejects(build2(testConfig(), { deprecations: [{ ...limits, sunset: '2026-07-29' }] }), /less than 90 days/)
  await t.rejects(build2(testConfig(), { deprecations: [{ ...limits, route: '/v1/account/limits' }] }), /METHOD/)
  t.ok(
    made.every((b) => !b.aedes || b.aedes.closed),
    'no broker left open',
  )
  // exactly 90 days is accepted
  const app = await build2(testConfig(), { deprecations: [{ ...limits, sunset: '2026-07-30' }] })
  await app.close()
})
