// SVC_TRUST_PROXY: behind a reverse proxy every client arrives from the proxy's address. When
// the operator names the proxy (a hop count or its addresses), the per-address limits (unknown
// tokens, device registrations) count each real client on its own; when nothing is trusted,
// X-Forwarded-For is ignored, so a client cannot escape a limit by writing the header.
import t from 'tap'
import { build, type Harness } from '../helpers.js'
import { loadConfig } from '../../src/config.js'
import { AUTH_FAILURE_LIMIT } from '../../src/platform/http/authFailures.js'
import { REGISTER_LIMIT_PER_MINUTE } from '../../src/domains/screens/deviceRoutes.js'
import { pairScreen } from '../screenHelpers.js'

const PROXY = '10.0.0.5'
const badKey = (i: number) => `ak_us_live_${String(i).padStart(32, 'x')}`

function viaProxy(h: Harness, client: string, token: string) {
  return h.app.inject({ method: 'GET', url: '/v1/nodes', remoteAddress: PROXY, headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': client } })
}

function register(h: Harness, remoteAddress: string, forwardedFor?: string) {
  return h.app.inject({
    method: 'POST',
    url: '/v1/devices/register',
    remoteAddress,
    payload: {},
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
  })
}

t.test('SVC_TRUST_PROXY is parsed, and refused when it would trust anybody', async (t) => {
  t.equal(loadConfig({}).trustProxy, false, 'unset: no proxy trusted')
  t.equal(loadConfig({ SVC_TRUST_PROXY: '' }).trustProxy, false)
  t.equal(loadConfig({ SVC_TRUST_PROXY: '1' }).trustProxy, 1)
  t.same(loadConfig({ SVC_TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,loopback, fd00::/8' }).trustProxy, ['10.0.0.5', '10.1.0.0/16', 'loopback', 'fd00::/8'])
  for (const bad of ['true', 'yes', '*']) t.throws(() => loadConfig({ SVC_TRUST_PROXY: bad }), /would trust any client's X-Forwarded-For/, bad)
  for (const bad of ['0', '11']) t.throws(() => loadConfig({ SVC_TRUST_PROXY: bad }), /hop count must be 1 to 10/, bad)
  for (const bad of ['proxy.example.com', '10.0.0.0/33', '10.0.0.1/8/2', '300.1.1.1']) {
    t.throws(() => loadConfig({ SVC_TRUST_PROXY: bad }), /SVC_TRUST_PROXY must be a hop count or a comma-separated list/, bad)
  }
})

t.test('a trusted proxy: unknown tokens are counted per real client', async (t) => {
  const h = await build(t, { trustProxy: [PROXY] })
  const { apiKey } = await h.workspace()
  for (let i = 0; i < AUTH_FAILURE_LIMIT; i++) t.equal((await viaProxy(h, '198.51.100.1', badKey(i))).statusCode, 401)
  t.equal((await viaProxy(h, '198.51.100.1', badKey(999))).statusCode, 429, 'the attacker behind the proxy is held off')
  t.equal((await viaProxy(h, '198.51.100.2', badKey(998))).statusCode, 401, 'another client behind the same proxy is not')
  t.equal((await viaProxy(h, '198.51.100.1', apiKey)).statusCode, 200, 'and a valid key never is')
  // A client that is not the proxy cannot name another address for itself.
  const direct = await h.app.inject({
    method: 'GET',
    url: '/v1/nodes',
    remoteAddress: '198.51.100.1',
    headers: { authorization: `Bearer ${badKey(997)}`, 'x-forwarded-for': '192.0.2.77' },
  })
  t.equal(direct.statusCode, 429, 'X-Forwarded-For from an untrusted peer is ignored')
})

t.test('no proxy trusted: X-Forwarded-For does not take a client out of its count', async (t) => {
  const h = await build(t)
  await h.workspace()
  for (let i = 0; i < AUTH_FAILURE_LIMIT; i++) await viaProxy(h, `198.51.100.${i + 1}`, badKey(i))
  t.equal((await viaProxy(h, '192.0.2.200', badKey(999))).statusCode, 429, 'every forwarded address counts as the connection itself')
})

t.test('a hop count trusts the nearest hops only', async (t) => {
  const h = await build(t, { trustProxy: 1 })
  await h.workspace()
  // The client put a fake address first; the proxy appended the one it saw.
  for (let i = 0; i <= AUTH_FAILURE_LIMIT; i++) await viaProxy(h, `192.0.2.${(i % 200) + 1}, 198.51.100.1`, badKey(i))
  t.equal((await viaProxy(h, '192.0.2.250, 198.51.100.1', badKey(999))).statusCode, 429, 'counted under the address the proxy saw')
  t.equal((await viaProxy(h, '198.51.100.1, 198.51.100.3', badKey(998))).statusCode, 401, 'another client is not')
})

t.test('device registrations: per real client behind a trusted proxy, per connection otherwise', async (t) => {
  const trusted = await build(t, { trustProxy: [PROXY] })
  for (let i = 0; i < REGISTER_LIMIT_PER_MINUTE; i++) t.equal((await register(trusted, PROXY, '198.51.100.1')).statusCode, 201)
  t.equal((await register(trusted, PROXY, '198.51.100.1')).statusCode, 429, 'one client over its limit')
  t.equal((await register(trusted, PROXY, '198.51.100.2')).statusCode, 201, 'a screen behind the same proxy still registers')

  const plain = await build(t)
  for (let i = 0; i < REGISTER_LIMIT_PER_MINUTE; i++) t.equal((await register(plain, '203.0.113.1', `192.0.2.${i + 1}`)).statusCode, 201)
  t.equal((await register(plain, '203.0.113.1', '192.0.2.222')).statusCode, 429, 'a forged X-Forwarded-For does not escape the limit')
})

t.test('without SVC_PUBLIC_URL, an https proxy that is trusted gets only TLS links for its devices', async (t) => {
  const poll = async (h: Harness, headers: Record<string, string>) => {
    const { apiKey } = await h.workspace()
    const p = await pairScreen(h, apiKey)
    const res = await h.app.inject({
      method: 'GET',
      url: `/v1/devices/register/${p.registrationId}`,
      remoteAddress: PROXY,
      headers: { authorization: `Bearer ${p.pollSecret}`, ...headers },
    })
    t.equal(res.statusCode, 200)
    return res.json().data.mqtt as { url: string | null; wsUrl: string }
  }
  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'signage.example.com', 'x-forwarded-for': '198.51.100.1' }
  const trusted = await poll(await build(t, { trustProxy: [PROXY] }), forwarded)
  t.equal(trusted.wsUrl, 'wss://signage.example.com/mqtt')
  t.equal(trusted.url, null, 'no plaintext MQTT address for a device of an https cloud')
  const untrusted = await poll(await build(t), { ...forwarded, host: 'cloud.internal:8080' })
  t.equal(untrusted.wsUrl, 'ws://cloud.internal:8080/mqtt', 'an untrusted hop cannot choose the scheme or host devices are sent to')
})
