// A 401 storm is bounded per client address: past the limit of failed authentications in
// a window the address gets 429 rate_limited with Retry-After and no database lookup; a
// token already refused is answered from memory; other addresses are unaffected.
import t from 'tap'
import { build, type Harness } from '../helpers.js'
import { AUTH_FAILURE_LIMIT } from '../../src/http/authFailures.js'

function from(h: Harness, ip: string, token: string) {
  return h.app.inject({ method: 'GET', url: '/v1/nodes', remoteAddress: ip, headers: { authorization: `Bearer ${token}` } })
}

/** Counts key lookups by watching the statements the database runs (either engine). */
function countLookups(h: Harness): { n: number } {
  const seen = { n: 0 }
  const executor = h.app.services.db.kysely.getExecutor()
  const run = executor.executeQuery.bind(executor)
  executor.executeQuery = ((q: { sql: string }, ...rest: unknown[]) => {
    if (/from "api_keys" where "preview"/i.test(q.sql)) seen.n++
    return (run as (...a: unknown[]) => unknown)(q, ...rest)
  }) as typeof executor.executeQuery
  return seen
}

const badKey = (i: number) => `ak_us_live_${String(i).padStart(32, 'x')}`

t.test('invalid credentials from one address: 401 up to the limit, then 429 with Retry-After and no lookups', async (t) => {
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
  t.match(over.json().message, /failed authentications .* from this address/)
  t.ok(Number(over.headers['retry-after']) >= 1)
  t.equal(over.json().retryAfterSeconds, Number(over.headers['retry-after']))
  for (let i = 0; i < 200; i++) t.equal((await from(h, '203.0.113.7', badKey(1000 + i))).statusCode, 429)
  // Even a valid key from that address waits out the window.
  t.equal((await from(h, '203.0.113.7', apiKey)).statusCode, 429)
  t.equal(lookups.n, AUTH_FAILURE_LIMIT, 'the storm past the limit cost no lookup')

  // Another address is unaffected.
  t.equal((await from(h, '198.51.100.9', badKey(5000))).statusCode, 401)
  t.equal((await from(h, '198.51.100.9', apiKey)).statusCode, 200)
  // The next window opens the address again.
  h.clock.advance(61_000)
  t.equal((await from(h, '203.0.113.7', apiKey)).statusCode, 200)
  t.equal((await from(h, '203.0.113.7', badKey(6000))).statusCode, 401)
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
  const users = h.app.services.users
  let userLookups = 0
  const auth = users.authenticate.bind(users)
  users.authenticate = async (tok: string) => (userLookups++, auth(tok))
  for (const ip of ips.slice(0, 10)) t.equal((await from(h, ip, `ust_${'z'.repeat(40)}`)).statusCode, 401)
  t.equal(userLookups, 1)
})
