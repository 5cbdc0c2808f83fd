// Single sign-on through its HTTP interface: the provider's settings (write-only client
// secret, sealed at rest; claimed domains; role mapping; who keeps password sign-in), and the
// OIDC sign-in against a real OpenID provider (oidc-provider, on https://localhost through
// the outbound guard's test allow-list): e-mail lookup, start, the provider's pages, the
// callback; a just-in-time user whose role follows the provider's claim at every sign-in; and
// the callbacks refused (state of another browser, replayed, expired, nonce not ours, an
// address of an unclaimed domain). On SQLite and, with SVC_TEST_DATABASE_URL, on PostgreSQL.
import t, { type Test } from 'tap'
import { ManualClock } from '@svc/shared'
import { servicesOf } from '../../src/app.js'
import type { Harness } from '../helpers.js'
import { forEngines, onOneEngine } from '../db/engines.js'
import { CA_FILE } from '../fixtures/receiver.js'
import { startOidcProvider, type TestProvider } from '../fixtures/oidcProvider.js'

const PUBLIC_URL = 'https://signage.example'
const REDIRECT_URI = `${PUBLIC_URL}/v1/sso/oidc/callback`
const PASSWORD = 'correct horse battery'

interface Browser {
  cookies: Map<string, string>
}

async function send(h: Harness, b: Browser, method: string, url: string, body?: unknown) {
  const cookie = [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  const res = await h.app.inject({
    method: method as 'GET',
    url,
    headers: cookie ? { cookie } : {},
    ...(body === undefined ? {} : { payload: body as object }),
  })
  for (const c of res.cookies as { name: string; value: string }[]) {
    if (c.value === '') b.cookies.delete(c.name)
    else b.cookies.set(c.name, c.value)
  }
  return res
}

async function provider(t: Test): Promise<TestProvider> {
  const p = await startOidcProvider({ redirectUris: [REDIRECT_URI] })
  t.after(() => p.close())
  return p
}

function settings(p: TestProvider, extra: Record<string, unknown> = {}) {
  return {
    protocol: 'oidc',
    issuer: p.issuer,
    clientId: p.clientId,
    clientSecret: p.clientSecret,
    emailDomains: ['acme.example'],
    roleClaim: 'groups',
    roleMap: { 'signage-admins': 'admin', 'signage-editors': 'editor' },
    ...extra,
  }
}

const guarded = { publicUrl: PUBLIC_URL, webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE }

/** Starts a sign-in for `email` in browser `b`, walks the provider's pages as `login`, and answers the callback's path and query. */
async function throughProvider(t: Test, h: Harness, p: TestProvider, b: Browser, email: string, login: string): Promise<string> {
  const start = await send(h, b, 'GET', `/v1/sso/start?email=${encodeURIComponent(email)}`)
  t.equal(start.statusCode, 200, 'start answers where to send the browser')
  const back = await p.signIn(start.json().data.url, login)
  t.equal(`${back.origin}${back.pathname}`, REDIRECT_URI, 'the provider sends the browser back to the redirect URI')
  return `${back.pathname}${back.search}`
}

forEngines(t, (t, build) => {
  t.test('the settings: write-only secret sealed at rest, claimed domains one workspace each, who may manage them', async (t) => {
    const p = await provider(t)
    const h = await build(t, guarded, { clock: new ManualClock(Date.now()) })
    const { apiKey, workspaceId } = await h.workspace('Acme')
    t.equal((await h.req('GET', '/v1/sso', apiKey)).statusCode, 404, 'no provider yet')
    const put = await h.req('PUT', '/v1/sso', apiKey, settings(p))
    t.equal(put.statusCode, 201, put.body)
    const view = put.json().data
    t.notOk('clientSecret' in view, 'the secret is not answered')
    t.equal(view.clientSecretSet, true)
    t.equal(view.passwordSignIn, 'owners', 'owners keep password sign-in by default')
    t.equal(view.defaultRole, 'viewer')
    t.equal(view.redirectUri, REDIRECT_URI)
    t.notOk((await h.req('GET', '/v1/sso', apiKey)).body.includes(p.clientSecret), 'nor read back')
    const row = await servicesOf(h.app).db.kysely.selectFrom('sso_providers').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow()
    t.notOk(JSON.stringify(row).includes(p.clientSecret), 'the stored row holds the secret sealed, not in clear')

    const { clientSecret: _, ...withoutSecret } = settings(p, { passwordSignIn: 'all' })
    const again = await h.req('PUT', '/v1/sso', apiKey, withoutSecret)
    t.equal(again.statusCode, 200, 'a change without the secret keeps the stored one')
    t.equal(again.json().data.clientSecretSet, true)

    const other = await h.workspace('Other')
    const taken = await h.req('PUT', '/v1/sso', other.apiKey, settings(p, { emailDomains: ['ACME.example'] }))
    t.equal(taken.statusCode, 409, 'a domain claimed by another workspace is refused')
    t.equal(taken.json().error, 'conflict')
    t.equal((await h.req('PUT', '/v1/sso', other.apiKey, settings(p, { emailDomains: ['not a domain'] }))).statusCode, 422)
    t.equal(
      (await h.req('PUT', '/v1/sso', other.apiKey, settings(p, { issuer: 'http://idp.example' }))).json().error,
      'validation_error',
      'an http issuer is refused',
    )
    t.equal(
      (await h.req('PUT', '/v1/sso', other.apiKey, { ...settings(p, { emailDomains: ['other.example'] }), clientSecret: undefined })).statusCode,
      422,
      'a first set-up needs the secret',
    )
    t.equal((await h.req('GET', '/v1/sso', other.apiKey)).statusCode, 404, 'tenants do not see each other')

    const editorKey = await h.req('POST', '/v1/api-keys', apiKey, { name: 'editor', permissions: ['user.view', 'screen.view'] })
    t.equal((await h.req('GET', '/v1/sso', editorKey.json().data.secret)).statusCode, 403, 'user.manage is needed')

    const test = await h.req('POST', '/v1/sso/test', apiKey)
    t.equal(test.statusCode, 200, test.body)
    t.equal(test.json().data.issuer, p.issuer)
    t.ok(test.json().data.keys >= 1, "the provider's keys were read")

    t.equal((await h.req('DELETE', '/v1/sso', apiKey)).statusCode, 200)
    t.equal((await h.req('PUT', '/v1/sso', other.apiKey, settings(p))).statusCode, 201, 'a removed provider releases its domains')
  })

  t.test('passwordSignIn: owners (the default) keep their password, others go through the provider; none and all', async (t) => {
    const p = await provider(t)
    const h = await build(t, guarded, { clock: new ManualClock(Date.now()) })
    const { apiKey } = await h.workspace('Acme')
    const s = servicesOf(h.app)
    const ws = (await h.req('GET', '/v1/account', apiKey)).json().data.id as string
    for (const [email, role] of [
      ['owner@acme.example', 'owner'],
      ['admin@acme.example', 'admin'],
    ] as const) {
      const u = await s.users.create(ws, { email, role })
      const inv = await s.signIns.invite(u)
      await s.signIns.acceptInvite({ token: inv.inviteUrl.split('#token=')[1]!, password: PASSWORD })
    }
    const signIn = (email: string) => h.req('POST', '/v1/session', null, { email, password: PASSWORD })
    t.equal((await signIn('admin@acme.example')).statusCode, 200, 'without single sign-on, passwords work')
    t.equal((await h.req('PUT', '/v1/sso', apiKey, settings(p))).statusCode, 201)
    t.equal((await signIn('owner@acme.example')).statusCode, 200, 'an owner keeps the password')
    const refused = await signIn('admin@acme.example')
    t.equal(refused.statusCode, 401, 'an admin with the right password is refused')
    t.equal(refused.json().error, 'invalid_credentials')
    await h.req('PUT', '/v1/sso', apiKey, settings(p, { passwordSignIn: 'none' }))
    t.equal((await signIn('owner@acme.example')).statusCode, 401, 'none: not even an owner')
    await h.req('PUT', '/v1/sso', apiKey, settings(p, { passwordSignIn: 'all' }))
    t.equal((await signIn('admin@acme.example')).statusCode, 200, 'all: everyone')
  })

  t.test('OIDC sign-in: e-mail lookup, PKCE, a just-in-time user whose role follows the claim at every sign-in', async (t) => {
    const p = await provider(t)
    const h = await build(t, guarded, { clock: new ManualClock(Date.now()) })
    const { apiKey } = await h.workspace('Acme')
    t.equal((await h.req('PUT', '/v1/sso', apiKey, settings(p))).statusCode, 201)
    p.accounts.set('ada', { email: 'Ada@acme.example', name: 'Ada L', groups: ['staff', 'signage-editors', 'signage-admins'] })

    t.same((await h.req('GET', '/v1/sso/lookup?email=ada%40ACME.example', null)).json().data, { sso: true, passwordSignIn: true })
    t.same((await h.req('GET', '/v1/sso/lookup?email=bob%40elsewhere.example', null)).json().data, { sso: false, passwordSignIn: true })
    t.equal((await h.req('GET', '/v1/sso/start?email=bob%40elsewhere.example', null)).statusCode, 404, 'an unclaimed domain has no provider')

    const b: Browser = { cookies: new Map() }
    const start = await send(h, b, 'GET', '/v1/sso/start?email=ada%40acme.example')
    t.equal(start.statusCode, 200)
    const to = new URL(start.json().data.url)
    t.equal(to.origin, p.issuer, 'to the provider')
    t.equal(to.searchParams.get('code_challenge_method'), 'S256', 'with PKCE')
    t.ok(to.searchParams.get('state') && to.searchParams.get('nonce'), 'with state and nonce')
    t.equal(b.cookies.get('svc_sso_state'), to.searchParams.get('state'), "the state is also the browser's cookie")
    const back = await p.signIn(to.href, 'ada')
    const cb = await send(h, b, 'GET', `${back.pathname}${back.search}`)
    t.equal(cb.statusCode, 200, cb.body)
    t.match(cb.body, /http-equiv="refresh" content="0;url=\/console\/"/, 'a page that forwards to the console')
    t.ok(b.cookies.get('svc_session')?.startsWith('ust_'), 'signed in with a session cookie')
    const session = (await send(h, b, 'GET', '/v1/session')).json().data
    t.equal(session.user.email, 'ada@acme.example', 'the user was made on the first sign-in')
    t.equal(session.user.name, 'Ada L')
    t.equal(session.user.role, 'admin', 'of several mapped groups, the highest role')
    t.ok(session.user.emailVerifiedAt, 'the provider vouched for the address')

    const replay = await send(h, { cookies: new Map([['svc_sso_state', to.searchParams.get('state')!]]) }, 'GET', `${back.pathname}${back.search}`)
    t.equal(replay.statusCode, 400, 'the same answer twice is refused')
    t.equal(replay.json().error, 'bad_request')

    // The provider moves Ada out of the admins: her next sign-in holds the mapped role, and the earlier session ends.
    p.accounts.set('ada', { email: 'ada@acme.example', groups: ['staff'] })
    const b2: Browser = { cookies: new Map() }
    t.equal((await send(h, b2, 'GET', await throughProvider(t, h, p, b2, 'ada@acme.example', 'ada'))).statusCode, 200)
    t.equal((await send(h, b2, 'GET', '/v1/session')).json().data.user.role, 'viewer', 'an unmapped claim gives the default role')
    t.equal((await send(h, b, 'GET', '/v1/session')).statusCode, 401, 'the session opened with the old role ended')
    const users = (await h.req('GET', '/v1/users', apiKey)).json().data.filter((u: { email: string }) => u.email === 'ada@acme.example')
    t.equal(users.length, 1, 'one user, found again by address')
  })

  t.test('OIDC callbacks refused: another browser, expired, a nonce not ours, an unclaimed address, the provider saying no', async (t) => {
    const p = await provider(t)
    const clock = new ManualClock(Date.now())
    const h = await build(t, guarded, { clock })
    const { apiKey } = await h.workspace('Acme')
    t.equal((await h.req('PUT', '/v1/sso', apiKey, settings(p))).statusCode, 201)
    p.accounts.set('ada', { email: 'ada@acme.example' })
    p.accounts.set('eve', { email: 'eve@elsewhere.example' })
    const db = servicesOf(h.app).db.kysely

    const victim: Browser = { cookies: new Map() }
    const attacker: Browser = { cookies: new Map() }
    const planted = await throughProvider(t, h, p, attacker, 'ada@acme.example', 'ada')
    const noCookie = await send(h, victim, 'GET', planted)
    t.equal(noCookie.statusCode, 400, 'an answer carried to a browser that did not start the sign-in (login CSRF) is refused')
    t.notOk(victim.cookies.has('svc_session'))
    victim.cookies.set('svc_sso_state', 'x'.repeat(43))
    t.equal((await send(h, victim, 'GET', planted)).statusCode, 400, "nor with another flow's state cookie")

    const late: Browser = { cookies: new Map() }
    const lateCb = await throughProvider(t, h, p, late, 'ada@acme.example', 'ada')
    clock.advance(11 * 60_000)
    const expired = await send(h, late, 'GET', lateCb)
    t.equal(expired.statusCode, 400, 'a sign-in older than 10 minutes is refused')
    t.match(expired.json().message, /expired/)

    const other: Browser = { cookies: new Map() }
    const otherCb = await throughProvider(t, h, p, other, 'ada@acme.example', 'ada')
    await db.updateTable('sso_flows').set({ nonce: 'not-the-nonce-the-provider-signed' }).where('used_at', 'is', null).execute()
    const badNonce = await send(h, other, 'GET', otherCb)
    t.equal(badNonce.statusCode, 401, "an ID token whose nonce is not the flow's is refused")
    t.match(badNonce.json().message, /nonce/)

    const eve: Browser = { cookies: new Map() }
    const eveCb = await send(h, eve, 'GET', await throughProvider(t, h, p, eve, 'ada@acme.example', 'eve'))
    t.equal(eveCb.statusCode, 401, 'an address of a domain the workspace did not claim is refused')
    t.notOk(eve.cookies.has('svc_session'))

    const no: Browser = { cookies: new Map() }
    const start = await send(h, no, 'GET', '/v1/sso/start?email=ada%40acme.example')
    const state = new URL(start.json().data.url).searchParams.get('state')!
    const denied = await send(h, no, 'GET', `/v1/sso/oidc/callback?error=access_denied&state=${state}`)
    t.equal(denied.statusCode, 401)
    t.match(denied.json().message, /access_denied/)
    const forged = await send(h, { cookies: new Map([['svc_sso_state', 'abc']]) }, 'GET', '/v1/sso/oidc/callback?code=abc&state=abc')
    t.equal(forged.statusCode, 400, 'an unknown state is refused')
    const users = (await h.req('GET', '/v1/users', apiKey)).json().data
    t.notOk(
      users.some((u: { email: string }) => u.email.startsWith('ada@') || u.email.startsWith('eve@')),
      'no user was made by a refused sign-in',
    )
  })
})

onOneEngine(t, (t, build) => {
  t.test('the outbound address checks stay on: a loopback provider is refused without the test allow-list', async (t) => {
    const p = await provider(t)
    const h = await build(t, { publicUrl: PUBLIC_URL })
    const { apiKey } = await h.workspace('Acme')
    const res = await h.req('PUT', '/v1/sso', apiKey, settings(p))
    t.equal(res.statusCode, 422)
    t.match(res.json().message, /issuer/)
  })
})
