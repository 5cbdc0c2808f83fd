// SSRF: every non-public address form is refused at creation with 400 unsafe_url, and a
// name that resolves to a private address when the delivery connects (DNS rebinding) is
// refused at delivery time by the guard's connect-time check.
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { build } from '../helpers.js'
import { OutboundGuard, type LookupFn } from '../../src/platform/net/OutboundGuard.js'
import { recordEvent } from '../fixtures/events.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

t.test('creation refuses every private, local and non-https form', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const refused = [
    'http://hooks.example.com/in', // not https
    'https://localhost/in',
    'https://sub.localhost/in',
    'https://intranet/in', // single-label name
    'https://127.0.0.1/in', // loopback
    'https://127.1.2.3:8443/in',
    'https://[::1]/in',
    'https://10.0.0.5/in', // private
    'https://172.16.3.4/in',
    'https://192.168.1.10/in',
    'https://[fd00::1]/in', // unique local
    'https://169.254.169.254/latest/meta-data', // link-local (cloud metadata)
    'https://[fe80::1]/in',
    'https://100.64.0.1/in', // CGNAT
    'https://224.0.0.1/in', // multicast
    'https://[ff02::1]/in',
    'https://192.0.2.1/in', // documentation
    'https://198.51.100.7/in',
    'https://203.0.113.9/in',
    'https://[2001:db8::1]/in',
    'https://[::ffff:127.0.0.1]/in', // IPv4-mapped
    'https://[::ffff:10.0.0.1]/in',
    'https://0.0.0.0/in',
    'https://0x7f000001/in', // hex / integer forms of 127.0.0.1
    'https://2130706433/in',
    'https://user:pw@hooks.example.com/in',
    'ftp://hooks.example.com/in',
  ]
  for (const url of refused) {
    const res = await h.req('POST', '/v1/webhooks', apiKey, { url })
    t.equal(res.statusCode, 400, url)
    t.equal(res.json().error, 'unsafe_url', url)
  }
  t.equal((await h.req('POST', '/v1/webhooks', apiKey, { url: 'https://8.8.8.8/in' })).statusCode, 201, 'a public literal is accepted')
  t.equal((await h.req('POST', '/v1/webhooks', apiKey, { url: 'https://hooks.example.com/in' })).statusCode, 201)
})

t.test('DNS rebinding: a public-looking name resolving to a private address is refused when the delivery connects', async (t) => {
  const answers: string[] = []
  const lookup: LookupFn = (host, _opts, cb) => {
    answers.push(host)
    cb(null, [{ address: host === 'rebind.example.com' ? '127.0.0.1' : '10.1.2.3', family: 4 }])
  }
  const outbound = new OutboundGuard({ lookup, timeoutMs: HANG_GUARD_MS })
  const h = await build(t, {}, { outbound })
  const { apiKey, workspaceId } = await h.workspace()
  const ep = (await h.req('POST', '/v1/webhooks', apiKey, { url: 'https://rebind.example.com/hook', events: ['screen.offline'] })).json().data
  t.ok(ep.id, 'the name passes the static check at creation')
  const test = (await h.req('POST', `/v1/webhooks/${ep.id}/test`, apiKey)).json().data
  t.equal(test.ok, false)
  t.equal(test.status, null)
  t.match(test.error, /unsafe address: rebind\.example\.com resolves to a non-public address \(127\.0\.0\.1\)/)
  t.ok(answers.includes('rebind.example.com'), 'the lookup ran at connect time')

  await recordEvent(servicesOf(h.app), { event: 'screen.offline', workspaceId, occurredAt: h.clock.now().toISOString(), data: {} })
  await servicesOf(h.app).webhookWorker.runOnce()
  const log = (await h.req('GET', '/v1/webhooks/deliveries?status=failed', apiKey)).json().data
  t.equal(log.length, 2, 'the test and the event both failed')
  for (const d of log) t.match(d.error, /^unsafe address/)

  // A URL stored before a rule change is checked again before each delivery.
  await servicesOf(h.app).db.run("UPDATE webhook_endpoints SET url = 'https://127.0.0.1/hook' WHERE id = ?", [ep.id])
  const again = (await h.req('POST', `/v1/webhooks/${ep.id}/test`, apiKey)).json().data
  t.match(again.error, /unsafe address: 127\.0\.0\.1 is not a public address/)
})

t.test('IPv4-compatible IPv6 and names ending in a dot: 400 unsafe_url for webhooks, import-url and alert chat URLs', async (t) => {
  const h = await build(t, { webhookAllowHosts: ['localhost'] })
  const { apiKey } = await h.workspace()
  const urls = [
    'https://[::127.0.0.1]/in',
    'https://[::7f00:1]/in',
    'https://[::10.0.0.1]/in',
    'https://[::169.254.169.254]/latest',
    'https://[64:ff9b::10.0.0.1]/in',
    'https://[2002:7f00:1::1]/in',
    'https://localhost./in',
    'https://intranet./in',
    'https://sub.localhost./in',
  ]
  const before = await servicesOf(h.app).db.all('SELECT * FROM webhook_endpoints')
  for (const url of urls) {
    const hook = await h.req('POST', '/v1/webhooks', apiKey, { url })
    t.equal(hook.statusCode, 400, `webhook ${url}`)
    t.equal(hook.json().error, 'unsafe_url')
    const imp = await h.req('POST', '/v1/media/import-url', apiKey, { url })
    t.equal(imp.statusCode, 400, `import-url ${url}`)
    t.equal(imp.json().error, 'unsafe_url')
    const rule = await h.req('POST', '/v1/alert-rules', apiKey, { name: 'x', config: { codes: ['display-off'], channels: ['chat'], chatUrls: [url] } })
    t.equal(rule.statusCode, 400, `chat ${url}`)
    t.equal(rule.json().error, 'unsafe_url')
  }
  t.same(await servicesOf(h.app).db.all('SELECT * FROM webhook_endpoints'), before, 'nothing stored')
  t.equal((await servicesOf(h.app).db.get<{ n: number }>('SELECT COUNT(*) AS n FROM alert_rules'))!.n, 0)

  // A URL stored before the rule is refused when the delivery connects.
  const ep = (await h.req('POST', '/v1/webhooks', apiKey, { url: 'https://hooks.example.com/in', events: ['screen.offline'] })).json().data
  for (const url of ['https://localhost./hook', 'https://[::7f00:1]/hook']) {
    await servicesOf(h.app).db.run('UPDATE webhook_endpoints SET url = ? WHERE id = ?', [url, ep.id])
    const res = (await h.req('POST', `/v1/webhooks/${ep.id}/test`, apiKey)).json().data
    t.equal(res.ok, false, url)
    t.match(res.error, /^unsafe address/, url)
  }
})
