import t from 'tap'
import { build, makeKey } from './helpers.js'

const ACCOUNT_FIELDS = [
  'id', 'status', 'whiteLabel', 'region', 'billingProvider', 'payment', 'contract', 'billingBanner', 'prefs', 'scheduledScreenPool',
  'pauseUntil', 'cancelEffectiveAt', 'deletionRequestedAt', 'trialEndsAt', 'nextBillingAt', 'currentTermEndsAt', 'verificationEmailLastSentAt',
  'cancelReason', 'everPaid', 'survey', 'subscriptionStatus', 'cadence', 'billableScreens', 'licensedScreens', 'emailVerifiedAt', 'email',
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
  t.equal(typeof a.billableScreens, 'number')
  t.equal(a.billingProvider, 'svc')
  t.match(a.payment, { option: 'invoice', cardAvailable: false })

  const user = await h.app.services.users.create(workspaceId, { email: 'owner@acme.test', role: 'owner' })
  const { token } = await h.app.services.users.createSession(user)
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
})
