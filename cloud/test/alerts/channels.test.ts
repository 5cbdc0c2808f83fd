// Alert channels against a REAL HTTPS receiver: the webhook channel is signed like webhook
// deliveries (verified with Stripe's verifier and the rule's secret), chat gets a JSON
// {text}, e-mail goes to addresses and role: tokens (the outbox without SMTP).
import { servicesOf } from '../../src/app.js'
import t from 'tap'
import Stripe from 'stripe'
import { build } from '../helpers.js'
import { ManualClock } from '../../src/platform/clock.js'
import { CA_FILE, startReceiver } from '../fixtures/receiver.js'

t.test('open and close reach webhook, chat and e-mail recipients', async (t) => {
  const receiver = await startReceiver()
  t.after(() => receiver.close())
  const h = await build(t, { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE }, { clock: new ManualClock(Date.now()) })
  const { apiKey, workspaceId } = await h.workspace()
  await servicesOf(h.app).users.create(workspaceId, { email: 'boss@example.com', role: 'owner' })
  const hook = `https://localhost:${receiver.port}/alert-hook/secret-path-0001`
  const chat = `https://localhost:${receiver.port}/chat/workflow-token-0002`
  const res = await h.req('POST', '/v1/alert-rules', apiKey, {
    name: 'Panel off',
    config: { codes: ['display-off'], channels: ['in-app', 'webhook', 'chat', 'email'], recipients: ['ops@example.com', 'role:owner', hook], chatUrls: [chat] },
  })
  t.equal(res.statusCode, 201, res.body)
  const rule = res.json().data
  t.match(rule.config.recipients[2], /^https:\/\/localhost:\d+•+0001$/)

  const screen = { id: 'scr_x', name: 'Window', nodeId: null }
  await servicesOf(h.app).alerts.panelPowerReported(workspaceId, screen, 'off', true)
  await servicesOf(h.app).alerts.notifier.settled()
  t.equal(receiver.received.length, 2)
  const wh = receiver.received.find((r) => r.path.startsWith('/alert-hook'))!
  const ch = receiver.received.find((r) => r.path.startsWith('/chat'))!
  t.equal(wh.path, '/alert-hook/secret-path-0001', 'the stored (unmasked) URL is used')
  t.equal(wh.headers['x-svc-event'], 'alert.opened')
  t.equal(wh.headers['user-agent'], 'Svc-Webhooks/1')
  t.ok(
    Stripe.webhooks.signature!.verifyHeader(wh.raw, wh.headers['svc-signature'] as string, rule.webhookSecret, 300, undefined, h.clock.now().getTime()),
    'signed with the rule secret',
  )
  const alert = (wh.body.data as { alert: { id: string; code: string; screenId: string } }).alert
  t.equal(alert.code, 'display-off')
  t.equal(alert.screenId, 'scr_x')
  t.equal(wh.body.workspaceId, workspaceId)
  t.match((ch.body as { text: string }).text, /Window: the display is off/)
  const mail = await servicesOf(h.app).mailer.outbox(workspaceId)
  t.equal(mail.length, 1)
  t.same(JSON.parse(mail[0]!.to_addresses).sort(), ['boss@example.com', 'ops@example.com'], 'role:owner expanded')
  t.match(mail[0]!.subject, /^\[warning\] Alert: /)

  await servicesOf(h.app).alerts.panelPowerReported(workspaceId, screen, 'on', true)
  await servicesOf(h.app).alerts.notifier.settled()
  t.equal(receiver.received.length, 4)
  const closed = receiver.received.slice(2).find((r) => r.path.startsWith('/alert-hook'))!
  t.equal(closed.headers['x-svc-event'], 'alert.closed')
  t.equal((closed.body.data as { alert: { id: string } }).alert.id, alert.id)
  t.equal((await servicesOf(h.app).mailer.outbox(workspaceId)).length, 2)
  // In-app: the event list shows it.
  t.equal((await h.req('GET', '/v1/alert-events', apiKey)).json().data[0].id, alert.id)
})

t.test('a failing channel does not stop the others or the evaluation', async (t) => {
  const receiver = await startReceiver((r) => (r.path.startsWith('/chat') ? { status: 500 } : { status: 200 }))
  t.after(() => receiver.close())
  const h = await build(t, { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE }, { clock: new ManualClock(Date.now()) })
  const { apiKey, workspaceId } = await h.workspace()
  await h.req('POST', '/v1/alert-rules', apiKey, {
    name: 'Disk',
    config: {
      codes: ['storage-critical'],
      channels: ['webhook', 'chat'],
      recipients: [`https://localhost:${receiver.port}/hook/abcdefgh1234`],
      chatUrls: [`https://localhost:${receiver.port}/chat/abcdefgh5678`],
    },
  })
  await servicesOf(h.app).alerts.storageReported(workspaceId, { id: 'scr_1', name: 'S', nodeId: null }, 99, 100)
  await servicesOf(h.app).alerts.notifier.settled()
  t.equal(receiver.received.length, 2)
  t.equal((await h.req('GET', '/v1/alert-events?state=open', apiKey)).json().data.length, 1)
})
