import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build, makeKey } from '../helpers.js'

t.test('600 requests per fixed 60-second window per workspace, shared by its keys', async (t) => {
  const h = await build(t)
  h.clock.set('2026-06-01T12:00:10.000Z') // 50 s left in this window
  const { apiKey } = await h.workspace()
  const second = await makeKey(h, apiKey, ['node.view']) // request 1 of the window
  const { apiKey: otherWs } = await h.workspace('Other')

  let last
  for (let i = 2; i <= 600; i++) {
    last = await h.req('GET', '/v1/nodes', i % 2 ? apiKey : second.secret)
    if (last.statusCode !== 200) break
  }
  t.equal(last!.statusCode, 200)
  t.equal(last!.headers['ratelimit-limit'], '600')
  t.equal(last!.headers['ratelimit-remaining'], '0')
  t.equal(last!.headers['ratelimit-reset'], '50')
  t.equal(last!.headers['ratelimit-policy'], '600;w=60')

  const over = await h.req('GET', '/v1/nodes', second.secret)
  t.equal(over.statusCode, 429)
  t.same(over.json(), {
    error: 'rate_limited',
    message: over.json().message,
    limit: 600,
    windowSeconds: 60,
    retryAfterSeconds: 50,
  })
  t.equal(over.headers['retry-after'], '50')
  t.equal(over.headers['ratelimit-remaining'], '0')

  // Another workspace has its own window.
  t.equal((await h.req('GET', '/v1/nodes', otherWs)).statusCode, 200)
  // Unauthenticated traffic is not counted and carries no headers.
  const anon = await h.req('GET', '/v1/status', null)
  t.notOk(anon.headers['ratelimit-limit'])

  // The window is clock-aligned: at :13:00 a fresh window starts.
  h.clock.set('2026-06-01T12:01:00.000Z')
  const fresh = await h.req('GET', '/v1/nodes', apiKey)
  t.equal(fresh.statusCode, 200)
  t.equal(fresh.headers['ratelimit-remaining'], '599')
  t.equal(fresh.headers['ratelimit-reset'], '60')
})

t.test('user session traffic is not rate limited and has no rate headers', async (t) => {
  const h = await build(t, { rateLimitPerMinute: 2 })
  const { workspaceId } = await h.workspace()
  const user = await servicesOf(h.app).users.create(workspaceId, { email: 'u@x.io' })
  const { token } = await servicesOf(h.app).users.createSession(user)
  for (let i = 0; i < 5; i++) {
    const res = await h.req('GET', '/v1/me', token)
    t.equal(res.statusCode, 200)
    t.notOk(res.headers['ratelimit-limit'])
  }
})

t.test('the per-key route limiter counts per key on one route', async (t) => {
  const h = await build(t)
  const limiter = servicesOf(h.app).rateLimiter
  for (let i = 1; i <= 300; i++) t.equal((await limiter.hit('key:a:/v1/media/upload', 300)).allowed, true)
  const d = await limiter.hit('key:a:/v1/media/upload', 300)
  t.equal(d.allowed, false)
  t.equal((await limiter.hit('key:b:/v1/media/upload', 300)).allowed, true)
  h.clock.advance(60_000)
  t.equal((await limiter.hit('key:a:/v1/media/upload', 300)).allowed, true)
})
