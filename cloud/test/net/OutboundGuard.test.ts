import t from 'tap'
import { OutboundGuard, UnsafeUrlError, isPublicAddress, isUnsafeUrlError, type LookupFn } from '../../src/platform/net/OutboundGuard.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

t.test('isPublicAddress refuses every non-public form', async (t) => {
  const refused = [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.254',
    '0.0.0.0',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '192.0.2.10',
    '198.51.100.7',
    '203.0.113.9',
    '198.18.0.1',
    '240.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::7f00:1',
    'not-an-ip',
  ]
  for (const ip of refused) t.equal(isPublicAddress(ip), false, ip)
  for (const ip of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8']) t.equal(isPublicAddress(ip), true, ip)
})

t.test('check(): https only, literal addresses and local names refused', async (t) => {
  const g = new OutboundGuard()
  t.after(() => g.close())
  for (const url of [
    'http://example.com/x',
    'ftp://example.com',
    'https://127.0.0.1/x',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://10.0.0.5:8443/h',
    'https://localhost/x',
    'https://intranet/x',
    'https://user:pw@example.com/',
    'nonsense',
    'https://0x7f000001/',
    'https://2130706433/',
  ]) {
    t.throws(() => g.check(url), UnsafeUrlError, url)
  }
  t.equal(g.check('https://hooks.example.com/in').hostname, 'hooks.example.com')
  const allowed = new OutboundGuard({ allowHosts: ['localhost'] })
  t.after(() => allowed.close())
  t.equal(allowed.check('https://localhost:9443/x').hostname, 'localhost')
})

t.test('a DNS name resolving to a private address is refused at connect time (rebinding)', async (t) => {
  let calls = 0
  // First answer public, then private: the connect-time check still sees the private one.
  const lookup: LookupFn = (_host, _opts, cb) => {
    calls++
    cb(null, [{ address: '127.0.0.1', family: 4 }])
  }
  const g = new OutboundGuard({ lookup, timeoutMs: HANG_GUARD_MS })
  t.after(() => g.close())
  const err = await g.request('https://rebind.example.com/hook', { body: '{}' }).catch((e: unknown) => e)
  t.ok(isUnsafeUrlError(err), `refused: ${String(err)}`)
  t.ok(calls >= 1, 'the lookup ran at connect time')
})

t.test('IPv6 forms embedding an IPv4 address and names ending in a dot are refused', async (t) => {
  for (const ip of [
    '::7f00:1',
    '::127.0.0.1',
    '::a00:1',
    '::10.0.0.1',
    '::8.8.8.8',
    '::808:808',
    '64:ff9b::a00:1',
    '64:ff9b:1::a00:1',
    '2002:7f00:1::1',
    '2002:a00:1::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  ]) {
    t.equal(isPublicAddress(ip), false, ip)
  }
  t.equal(isPublicAddress('::ffff:8.8.8.8'), true, 'IPv4-mapped public stays public')
  const g = new OutboundGuard({ allowHosts: ['localhost'] })
  t.after(() => g.close())
  for (const url of [
    'https://[::127.0.0.1]/',
    'https://[::7f00:1]/x',
    'https://[::10.0.0.1]/',
    'https://[64:ff9b::127.0.0.1]/',
    'https://[2002:7f00:1::1]/',
    'https://localhost./x',
    'https://intranet./x',
    'https://sub.localhost./',
    'https://hooks.example.com./in',
  ]) {
    t.throws(() => g.check(url), UnsafeUrlError, url)
  }
})

t.test('connect time: the guarded pool refuses embedded-IPv4 literals, dotted names and lookups to them, even past check()', async (t) => {
  const { startReceiver, CA_FILE } = await import('../fixtures/receiver.js')
  const { request } = await import('undici')
  const rec = await startReceiver()
  t.after(() => rec.close())
  const lookup: LookupFn = (host, _opts, cb) => {
    if (host === 'localhost') return cb(null, [{ address: '127.0.0.1', family: 4 }])
    cb(null, [{ address: '::7f00:1', family: 6 }])
  }
  const g = new OutboundGuard({ allowHosts: ['localhost'], caFile: CA_FILE, lookup, timeoutMs: HANG_GUARD_MS })
  t.after(() => g.close())
  // The allowed test receiver is reachable through the same pool.
  const ok = await request(`https://localhost:${rec.port}/ok`, { method: 'POST', body: '{}', dispatcher: g.dispatcher })
  await ok.body.dump()
  t.equal(ok.statusCode, 200)
  for (const url of [
    `https://[::ffff:127.0.0.1]:${rec.port}/x`,
    `https://127.0.0.1:${rec.port}/x`,
    `https://localhost.:${rec.port}/x`,
    `https://compat.example.com:${rec.port}/x`,
  ]) {
    const err = await request(url, { method: 'POST', body: '{}', dispatcher: g.dispatcher }).catch((e: unknown) => e)
    t.ok(isUnsafeUrlError(err), `${url}: ${String(err)}`)
  }
  t.equal(rec.received.length, 1, 'only the allowed request reached the receiver')
})
