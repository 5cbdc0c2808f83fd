import { servicesOf } from '../../src/app.js'
import t from 'tap'
import { pairScreen } from '../screenHelpers.js'
import { build, makeKey } from '../helpers.js'

const ACCOUNT_FIELDS = [
  'id',
  'status',
  'whiteLabel',
  'region',
  'billingProvider',
  'payment',
  'contract',
  'billingBanner',
  'prefs',
  'scheduledScreenPool',
  'pauseUntil',
  'cancelEffectiveAt',
  'deletionRequestedAt',
  'trialEndsAt',
  'nextBillingAt',
  'currentTermEndsAt',
  'verificationEmailLastSentAt',
  'cancelReason',
  'everPaid',
  'survey',
  'subscriptionStatus',
  'cadence',
  'billableScreens',
  'licensedScreens',
  'emailVerifiedAt',
  'email',
]

t.test('GET /v1/account has every field of the Account object', async (t) => {
  const h = await build(t)
  const { apiKey, workspaceId } = await h.workspace('Acme', 'oc')
  const res = await h.req('GET', '/v1/account', apiKey)
  t.equal(res.statusCode, 200)
  const a = res.json().data
  for (const f of ACCOUNT_FIELDS) t.ok(f in a, `field ${f}`)
  t.equal(a.id, workspaceId)
  t.equal(a.region, 'oc')
  t.equal(a.status, 'active')
  t.equal(a.email, null, 'null for an API key')
  t.equal(a.emailVerifiedAt, null)
  t.equal(a.billableScreens, 0, 'no screen yet')
  const node = (await h.req('POST', '/v1/nodes', apiKey, { name: 'Store' })).json().data
  await pairScreen(h, apiKey, 'At the root')
  await pairScreen(h, apiKey, 'In a store', node.id)
  t.equal((await h.req('GET', '/v1/account', apiKey)).json().data.billableScreens, 2, 'every paired screen, wherever it is homed')
  t.equal(a.billingProvider, 'svc')
  t.match(a.payment, { option: 'invoice', cardAvailable: false })

  const user = await servicesOf(h.app).users.create(workspaceId, { email: 'owner@acme.test', role: 'owner' })
  const { token } = await servicesOf(h.app).users.createSession(user)
  t.equal((await h.req('GET', '/v1/account', token)).json().data.email, 'owner@acme.test')

  const noPerm = await makeKey(h, apiKey, ['node.view'])
  t.same((await h.req('GET', '/v1/account', noPerm.secret)).json(), { error: 'forbidden', message: 'Missing permission: account.view' })
})

t.test('GET /v1/account/limits', async (t) => {
  const h = await build(t)
  const { apiKey } = await h.workspace()
  const l = (await h.req('GET', '/v1/account/limits', apiKey)).json().data
  t.same(l.rateLimit, { limit: 600, windowSeconds: 60, scope: 'workspace', appliesTo: 'api-key' })
  t.equal(l.mediaUploadPerMinutePerKey, 300)
  t.same(l.serialTemplate, { nameMaxChars: 120, maxCommands: 200, valueMaxChars: 512 })
  t.equal(l.mediaUploadMaxBytes, 134217728, 'the enforced default, 128 MiB')
})

t.test('GET /v1/account/limits reports the upload ceiling the server enforces', async (t) => {
  const h = await build(t, { mediaUploadMaxBytes: 5000, mediaImportMaxBytes: 7000 })
  const { apiKey } = await h.workspace()
  const l = (await h.req('GET', '/v1/account/limits', apiKey)).json().data
  t.equal(l.mediaUploadMaxBytes, 5000)
  t.equal(l.mediaImportMaxBytes, 7000)
  // And the upload route enforces that same number.
  const boundary = 'b0undary'
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    Buffer.alloc(l.mediaUploadMaxBytes + 1, 1),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/media/upload',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload,
  })
  t.equal(res.statusCode, 413)
  t.equal(res.json().error, 'too_large')
})
