// Failed authentications are bounded per client address and token kind, and a credential
// that authenticates is never held off: past the limit of unknown tokens in a window, the
// next unknown token of that kind from that address answers 429 rate_limited with
// Retry-After, while valid keys, sessions and tokens from the same address keep working
// (behind a reverse proxy every user may share that address). A token already refused is
// answered from memory.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build, type Harness } from '../helpers.js'
import { AUTH_FAILURE_LIMIT, tokenKind } from '../../src/platform/http/authFailures.js'

function from(h: Harness, ip: string, token: string, url = '/v1/nodes') {
  return h.app.inject({ method: 'GET', url, remoteAddress: ip, headers: { authorization: `Bearer ${token}` } })
}

/** Counts key lookups by watching the statements the database runs (either engine). */
function countLookups(h: Harness): { n: number } {
  const seen = { n: 0 }
  const executor = servicesOf(h.app).db.kysely.getExecutor()
  const run = executor.executeQuery.bind(executor)
  executor.executeQuery = ((q: { sql: string }, ...rest: unknown[]) => {
    if (/from "api_keys" where "preview"/i.test(q.sql)) seen.n++
    return (run as (...a: unknown[]) => unknown)(q, ...rest)
  }) as typeof executor.executeQuery
  return seen
}

const badKey = (i: number) => `ak_us_live_${String(i).padStart(32, 'x')}`

t.test('the lock-out: 61 bad keys from one address, then the owner from that address still gets in', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  // A second credential from the same address that no request has warmed (not cached yet).
  const created = await h.app.inject({
    method: 'POST',
    url: '/v1/api-keys',
    headers: { authorization: `Bearer ${apiKey}` },
    payload: { name: 'second', permissions: ['screen.view'] },
  })
  t.equal(created.statusCode, 201)
  const second = created.json().data.secret as string
  for (let i = 0; i <= AUTH_FAILURE_LIMIT; i++) await from(h, '203.0.113.7', badKey(i))
  t.equal((await from(h, '203.0.113.7', badKey(5000))).statusCode, 429, 'the attacker is held off')
  t.equal((await from(h, '203.0.113.7', apiKey, '/v1/me')).statusCode, 200, "the owner's key from the same address answers")
  t.notOk(servicesOf(h.app).apiKeys.cachedPrincipal(second), 'the second key was never looked up')
  t.equal((await from(h, '203.0.113.7', second, '/v1/me')).statusCode, 200, 'a key never looked up before answers too')
})

t.test('unknown tokens from one address: 401 up to the limit, then 429 with Retry-After', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const lookups = countLookups(h)
  for (let i = 0; i < AUTH_FAILURE_LIMIT; i++) {
    const res = await from(h, '203.0.113.7', badKey(i))
    t.equal(res.statusCode, 401)
  }
  t.equal(lookups.n, AUTH_FAILURE_LIMIT, 'one lookup per distinct bad key so far')
  const over = await from(h, '203.0.113.7', badKey(999))
  t.equal(over.statusCode, 429)
  t.equal(over.json().error, 'rate_limited')
  t.match(over.json().message, /failed authentications .* from this address for unknown tokens of this kind/)
  t.ok(Number(over.headers['retry-after']) >= 1)
  t.equal(over.json().retryAfterSeconds, Number(over.headers['retry-after']))
  for (let i = 0; i < 50; i++) t.equal((await from(h, '203.0.113.7', badKey(1000 + i))).statusCode, 429)
  // The same bad keys again cost no lookup (negative cache) and are still held off.
  const before = lookups.n
  for (let i = 0; i < 50; i++) t.equal((await from(h, '203.0.113.7', badKey(1000 + i))).statusCode, 429)
  t.equal(lookups.n, before, 'a refused token presented again is not looked up again')

  // Valid credentials from that address are never held off.
  t.equal((await from(h, '203.0.113.7', apiKey)).statusCode, 200)
  // Unknown tokens of another kind from that address are counted on their own.
  t.equal((await from(h, '203.0.113.7', `ust_${'q'.repeat(40)}`)).statusCode, 401)
  // Another address is unaffected.
  t.equal((await from(h, '198.51.100.9', badKey(5000))).statusCode, 401)
  // The next window opens the address again.
  h.clock.advance(61_000)
  t.equal((await from(h, '203.0.113.7', badKey(6000))).statusCode, 401)
})

t.test('a user session from a held-off address still works', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const invited = await h.app.inject({
    method: 'POST',
    url: '/v1/users',
    headers: { authorization: `Bearer ${apiKey}` },
    payload: { email: 'ops@example.com', name: 'Ops', role: 'viewer' },
  })
  t.equal(invited.statusCode, 201, invited.body)
  const session = invited.json().data.sessionToken as string
  for (let i = 0; i <= AUTH_FAILURE_LIMIT; i++) await from(h, '203.0.113.8', `ust_${String(i).padStart(40, 'y')}`)
  t.equal((await from(h, '203.0.113.8', `ust_${'y'.repeat(41)}`)).statusCode, 429)
  t.equal((await from(h, '203.0.113.8', session, '/v1/me')).statusCode, 200)
})

t.test('token kinds', async (t) => {
  t.equal(tokenKind('ak_us_live_abc'), 'ak_us_live_')
  t.equal(tokenKind('ak_eu_test_abc'), 'ak_eu_test_')
  t.equal(tokenKind('ust_abc'), 'ust_')
  t.equal(tokenKind('oat_abc'), 'oat_')
  t.equal(tokenKind('garbage'), 'other')
})

t.test('the same bad token again is refused from memory (negative cache)', async (t) => {
  const h = await build(t)
  await h.workspace()
  const lookups = countLookups(h)
  const ips = Array.from({ length: 40 }, (_, i) => `192.0.2.${i + 1}`)
  for (const ip of ips) {
    const res = await from(h, ip, badKey(1))
    t.equal(res.statusCode, 401)
    t.equal(res.json().error, 'invalid_credentials')
  }
  t.equal(lookups.n, 1, '40 attempts with one bad token from 40 addresses: one lookup')
  // Session tokens too.
  const users = servicesOf(h.app).users
  let userLookups = 0
  const auth = users.authenticate.bind(users)
  users.authenticate = async (tok: string) => (userLookups++, auth(tok))
  for (const ip of ips.slice(0, 10)) t.equal((await from(h, ip, `ust_${'z'.repeat(40)}`)).statusCode, 401)
  t.equal(userLookups, 1)
})
