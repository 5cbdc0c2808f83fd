// SAML 2.0 sign-in through its HTTP interface, against answers signed in the test by the
// provider's side (fixtures/samlIdp.ts: xml-crypto with the committed test key pair): the
// provider's settings from its metadata or from a URL and certificate, the workspace's SP
// metadata, the AuthnRequest, and the ACS signing in a just-in-time user whose role follows the
// role attribute. Refused, each with `{error, message}`: an unsigned assertion, one signed by
// another key, one altered after signing, the wrong audience, the wrong recipient, expired on
// the cloud's clock, replayed, unsolicited, and an address of an unclaimed domain. Every
// sign-in, good or refused, is in the audit log. On SQLite and PostgreSQL.
import t, { type Test } from 'tap'
import { ManualClock } from '@svc/shared'
import { servicesOf } from '../../src/app.js'
import { LOOKUP_RATE, START_RATE } from '../../src/domains/sso/ssoRoutes.js'
import type { Harness } from '../helpers.js'
import { forEngines } from '../db/engines.js'
import { CA_FILE } from '../fixtures/receiver.js'
import { authnRequestOf, IDP_CERT, IDP_ENTITY_ID, IDP_SSO_URL, idpMetadata, samlResponse, type Answer } from '../fixtures/samlIdp.js'

const PUBLIC_URL = 'https://signage.example'
const guarded = { publicUrl: PUBLIC_URL, webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE }

function settings(extra: Record<string, unknown> = {}) {
  return {
    protocol: 'saml',
    idpMetadataXml: idpMetadata(),
    emailDomains: ['acme.example'],
    roleAttribute: 'groups',
    roleMap: { 'signage-admins': 'admin', 'signage-editors': 'editor' },
    ...extra,
  }
}

/** Posts a SAMLResponse to the workspace's ACS the way the provider's auto-submitted form does, from the browser holding `cookie` (its SAML request cookie). */
function post(h: Harness, acsUrl: string, samlResponse: string, cookie: string | null) {
  const u = new URL(acsUrl)
  return h.app.inject({
    method: 'POST',
    url: `${u.pathname}${u.search}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === null ? {} : { cookie: `svc_sso_saml=${cookie}` }) },
    payload: new URLSearchParams({ SAMLResponse: samlResponse, RelayState: '' }).toString(),
  })
}

interface Setup {
  h: Harness
  clock: ManualClock
  apiKey: string
  workspaceId: string
  acsUrl: string
  spEntityId: string
  /** The SAML request cookie the last start set (the test's one browser). */
  cookie: string | null
}

async function setup(t: Test, build: Parameters<Parameters<typeof forEngines>[1]>[1]): Promise<Setup> {
  const clock = new ManualClock(Date.now())
  const h = await build(t, guarded, { clock })
  const { apiKey, workspaceId } = await h.workspace('Acme')
  const put = await h.req('PUT', '/v1/sso', apiKey, settings())
  t.equal(put.statusCode, 201, put.body)
  const { acsUrl, spEntityId } = put.json().data
  return { h, clock, apiKey, workspaceId, acsUrl, spEntityId, cookie: null }
}

/** Starts a sign-in for `email` and answers the AuthnRequest's ID. */
async function start(t: Test, s: Setup, email: string): Promise<string> {
  const res = await s.h.req('GET', `/v1/sso/start?email=${encodeURIComponent(email)}`, null)
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().data.protocol, 'saml')
  s.cookie = cookieOf(res)
  return authnRequestOf(res.json().data.url).id
}

/** The SAML request cookie a response set (its value), or null. */
function cookieOf(res: { cookies: unknown }): string | null {
  return (res.cookies as { name: string; value: string }[]).find((c) => c.name === 'svc_sso_saml')?.value ?? null
}

function answer(s: Setup, inResponseTo: string | null, email: string, extra: Partial<Answer> = {}): string {
  return samlResponse({ inResponseTo, email, audience: s.spEntityId, recipient: s.acsUrl, now: s.clock.now(), ...extra })
}

forEngines(t, (t, build) => {
  t.test('the settings: from metadata or URL and certificate, the SP metadata, bad documents refused', async (t) => {
    const s = await setup(t, build)
    const { h, apiKey, workspaceId } = s
    const view = (await h.req('GET', '/v1/sso', apiKey)).json().data
    t.equal(view.protocol, 'saml')
    t.equal(view.entryPoint, IDP_SSO_URL, "the HTTP-Redirect sign-in URL, from the provider's metadata")
    t.equal(view.idpIssuer, IDP_ENTITY_ID)
    t.equal(view.idpCertificates.length, 1)
    t.match(view.idpCertificates[0].subject, /CN=localhost/)
    t.equal(view.spEntityId, `${PUBLIC_URL}/v1/sso/saml/metadata?workspace=${workspaceId}`)
    t.equal(view.acsUrl, `${PUBLIC_URL}/v1/sso/saml/acs?workspace=${workspaceId}`)
    t.equal(view.roleAttribute, 'groups')

    const md = await h.app.inject({ method: 'GET', url: `/v1/sso/saml/metadata?workspace=${workspaceId}` })
    t.equal(md.statusCode, 200)
    t.match(md.headers['content-type'], /application\/samlmetadata\+xml/)
    t.match(md.body, `entityID="${view.spEntityId.replace(/&/g, '&amp;')}"`)
    t.match(md.body, /WantAssertionsSigned="true"/)
    t.match(md.body, `Location="${view.acsUrl.replace(/&/g, '&amp;')}"`)
    const other = await h.workspace('Other')
    const none = await h.app.inject({ method: 'GET', url: `/v1/sso/saml/metadata?workspace=${other.workspaceId}` })
    t.equal(none.statusCode, 404, 'a workspace without a SAML provider has no metadata')
    t.equal(none.json().error, 'not_found')

    const byHand = await h.req('PUT', '/v1/sso', apiKey, {
      protocol: 'saml',
      entryPoint: IDP_SSO_URL,
      idpCertificate: IDP_CERT,
      idpIssuer: IDP_ENTITY_ID,
      emailDomains: ['acme.example'],
    })
    t.equal(byHand.statusCode, 200, byHand.body)
    t.equal(byHand.json().data.defaultRole, 'viewer')
    const test = await h.req('POST', '/v1/sso/test', apiKey)
    t.equal(test.statusCode, 200, test.body)
    t.equal(test.json().data.keys, 1, 'the certificate is valid on the cloud clock')

    for (const [what, body] of [
      ['a certificate that is none', { ...settings(), idpMetadataXml: undefined, entryPoint: IDP_SSO_URL, idpCertificate: 'MIIBnotacert' }],
      ['metadata with a DTD', settings({ idpMetadataXml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${idpMetadata()}` })],
      ['metadata without a certificate', settings({ idpMetadataXml: idpMetadata().replace(/<md:KeyDescriptor[\s\S]*<\/md:KeyDescriptor>/, '') })],
      ['an http sign-in URL', { protocol: 'saml', entryPoint: 'http://idp.example/sso', idpCertificate: IDP_CERT, emailDomains: ['acme.example'] }],
    ] as const) {
      const res = await h.req('PUT', '/v1/sso', apiKey, body)
      t.equal(res.statusCode, 422, `${what}: ${res.body}`)
      t.equal(res.json().error, 'validation_error', what)
    }

    // A change without the provider's part (the console's form after set-up) keeps the stored one.
    const kept = await h.req('PUT', '/v1/sso', apiKey, { protocol: 'saml', emailDomains: ['acme.example'], passwordSignIn: 'all' })
    t.equal(kept.statusCode, 200, kept.body)
    t.equal(kept.json().data.entryPoint, IDP_SSO_URL, 'the sign-in URL kept')
    t.equal(kept.json().data.idpCertificates.length, 1, 'the certificate kept')
    t.equal(kept.json().data.passwordSignIn, 'all')
    // A workspace with no SAML provider yet must say which one.
    const first = await h.req('PUT', '/v1/sso', other.apiKey, { protocol: 'saml', emailDomains: ['other.example'] })
    t.equal(first.statusCode, 422, `neither metadata nor URL: ${first.body}`)
    t.match(first.json().message, /idpMetadataXml, or entryPoint and idpCertificate/)
  })

  t.test('sign-in: AuthnRequest, a signed answer, a just-in-time user whose role follows the attribute', async (t) => {
    const s = await setup(t, build)
    const { h, apiKey, workspaceId } = s
    const res = await h.req('GET', '/v1/sso/start?email=ada%40acme.example', null)
    const to = new URL(res.json().data.url)
    t.equal(`${to.origin}${to.pathname}`, IDP_SSO_URL, "to the provider's sign-in URL")
    t.equal(to.searchParams.get('login_hint'), 'ada@acme.example')
    const req = authnRequestOf(to.href)
    s.cookie = cookieOf(res)
    t.equal(s.cookie, req.id, "the browser's cookie holds the AuthnRequest's ID")
    t.equal(req.acs, s.acsUrl, "the request names the workspace's ACS")
    t.equal(req.issuer, s.spEntityId, "and the workspace's entity ID")

    const ok = await post(
      h,
      s.acsUrl,
      answer(s, req.id, 'Ada@acme.example', { attributes: { name: ['Ada L'], groups: ['staff', 'signage-editors', 'signage-admins'] } }),
      s.cookie,
    )
    t.equal(ok.statusCode, 200, ok.body)
    t.match(ok.body, /http-equiv="refresh" content="0;url=\/console\/"/, 'a page that forwards to the console')
    const cookie = (ok.cookies as { name: string; value: string }[]).find((c) => c.name === 'svc_session')
    t.ok(cookie?.value.startsWith('ust_'), 'signed in with a session cookie')
    const session = (await h.app.inject({ method: 'GET', url: '/v1/session', headers: { cookie: `svc_session=${cookie!.value}` } })).json().data
    t.equal(session.user.email, 'ada@acme.example', 'the user was made on the first sign-in')
    t.equal(session.user.name, 'Ada L')
    t.equal(session.user.role, 'admin', 'of several mapped groups, the highest role')

    // The next sign-in without the admins' group: the mapped role follows, the earlier session ends.
    const againAnswer = answer(s, await start(t, s, 'ada@acme.example'), 'ada@acme.example', { attributes: { groups: ['staff'] } })
    const again = await post(h, s.acsUrl, againAnswer, s.cookie)
    t.equal(again.statusCode, 200, again.body)
    t.equal(
      (await h.app.inject({ method: 'GET', url: '/v1/session', headers: { cookie: `svc_session=${cookie!.value}` } })).statusCode,
      401,
      'the earlier session ended',
    )
    const users = (await h.req('GET', '/v1/users', apiKey)).json().data.filter((u: { email: string }) => u.email === 'ada@acme.example')
    t.equal(users.length, 1, 'one user, found again by address')
    t.equal(users[0].role, 'viewer', 'an unmapped attribute gives the default role')

    const entries = await servicesOf(h.app)
      .db.kysely.selectFrom('audit_entries')
      .selectAll()
      .where('chain', '=', workspaceId)
      .where('action', '=', 'sso.saml')
      .orderBy('seq')
      .execute()
    t.same(
      entries.map((e) => [e.via, e.outcome, e.actor_name]),
      [
        ['sso', 'success', 'ada@acme.example'],
        ['sso', 'success', 'ada@acme.example'],
      ],
      'each sign-in is in the audit log',
    )
  })

  t.test('answers refused: unsigned, another key, altered, audience, recipient, expired, replayed, unsolicited, unclaimed', async (t) => {
    const s = await setup(t, build)
    const { h, workspaceId } = s
    const refused = async (what: string, body: string, message: RegExp) => {
      const res = await post(h, s.acsUrl, body, s.cookie)
      t.equal(res.statusCode, 401, `${what}: ${res.body}`)
      t.equal(res.json().error, 'invalid_credentials', what)
      t.match(res.json().message, message, what)
      t.notOk(
        (res.cookies as { name: string }[]).some((c) => c.name === 'svc_session'),
        `${what}: no session`,
      )
    }
    const email = 'ada@acme.example'
    await refused('unsigned', answer(s, await start(t, s, email), email, { signing: 'unsigned' }), /signature/i)
    await refused('signed by another key', answer(s, await start(t, s, email), email, { signing: 'otherKey' }), /signature/i)
    await refused('altered after signing', answer(s, await start(t, s, email), email, { signing: 'tampered' }), /signature/i)
    await refused('another audience', answer(s, await start(t, s, email), email, { audience: 'https://signage.example/other' }), /audience/i)
    await refused('another recipient', answer(s, await start(t, s, email), email, { recipient: 'https://evil.example/acs' }), /Recipient/)
    await refused('another issuer', answer(s, await start(t, s, email), email, { issuer: 'https://evil.example/saml' }), /issuer/i)
    await refused('unsolicited (no InResponseTo)', answer(s, null, email), /InResponseTo/)
    await refused('an AuthnRequest never made', answer(s, '_saml_never', email), /InResponseTo/)
    await refused(
      'an address of an unclaimed domain',
      answer(s, await start(t, s, email), 'eve@elsewhere.example'),
      /not of an e-mail domain this workspace claims/,
    )

    // Expired on the cloud's clock: made now, posted six minutes later (NotOnOrAfter is 5 minutes, 60 s of skew).
    const late = answer(s, await start(t, s, email), email)
    s.clock.advance(6 * 60_000 + 1000)
    await refused('expired', late, /expired|NotOnOrAfter|subject confirmation/i)

    const good = answer(s, await start(t, s, email), email)
    t.equal((await post(h, s.acsUrl, good, s.cookie)).statusCode, 200, 'the same kind of answer, valid, signs in')
    await refused('replayed', good, /InResponseTo/)

    // The AuthnRequest is used once even when its first answer was refused.
    const id = await start(t, s, email)
    await refused('wrong audience first', answer(s, id, email, { audience: 'https://x.example' }), /audience/i)
    await refused('then a good answer to the same request', answer(s, id, email), /InResponseTo/)

    const other = await h.workspace('Other')
    const wrongWs = await post(h, `${PUBLIC_URL}/v1/sso/saml/acs?workspace=${other.workspaceId}`, good, s.cookie)
    t.equal(wrongWs.statusCode, 401, 'a workspace without a SAML provider refuses')

    const denied = await servicesOf(h.app)
      .db.kysely.selectFrom('audit_entries')
      .select(['outcome', 'changes'])
      .where('chain', '=', workspaceId)
      .where('action', '=', 'sso.saml')
      .where('outcome', '=', 'denied')
      .orderBy('seq')
      .execute()
    t.equal(denied.length, 13, 'every refused answer is in the audit log')
    t.match(denied[0]!.changes, /signature/i, 'with why')
  })

  t.test('an answer is taken only from the browser that started the sign-in (its request cookie)', async (t) => {
    const s = await setup(t, build)
    const { h } = s
    const email = 'ada@acme.example'
    // The attacker starts a sign-in for their own account and gets the provider's good answer.
    const theirs = await start(t, s, email)
    const theirCookie = s.cookie
    t.equal(theirCookie, theirs, 'the start sets the request cookie')
    const good = answer(s, theirs, email)
    // ... and makes another browser post it: one that started nothing, then one that started its own sign-in.
    const none = await post(h, s.acsUrl, good, null)
    t.equal(none.statusCode, 401, `a browser without the cookie: ${none.body}`)
    t.equal(none.json().error, 'invalid_credentials')
    t.match(none.json().message, /not the sign-in started in this browser/)
    t.notOk(
      (none.cookies as { name: string }[]).some((c) => c.name === 'svc_session'),
      'no session',
    )
    await start(t, s, email)
    const other = await post(h, s.acsUrl, good, s.cookie)
    t.equal(other.statusCode, 401, `a browser that started another sign-in: ${other.body}`)
    t.match(other.json().message, /not the sign-in started in this browser/)
    // Refused before the request is taken: the browser that started it still signs in, and its cookie is cleared.
    const mine = await post(h, s.acsUrl, good, theirCookie)
    t.equal(mine.statusCode, 200, mine.body)
    const cleared = (mine.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]).find((c) => c.name === 'svc_sso_saml')
    t.ok(cleared && cleared.value === '', 'the request cookie is cleared at the ACS')
  })

  t.test('starting single sign-on is rate limited per address (429 with Retry-After), as the other doors without a credential are', async (t) => {
    const s = await setup(t, build)
    const startFrom = (ip: string) => s.h.app.inject({ method: 'GET', url: '/v1/sso/start?email=ada%40acme.example', remoteAddress: ip })
    for (let i = 0; i < START_RATE.limit; i++) {
      const res = await startFrom('192.0.2.7')
      if (res.statusCode !== 200) t.fail(`start ${i + 1} of ${START_RATE.limit}: ${res.statusCode} ${res.body}`)
    }
    const over = await startFrom('192.0.2.7')
    t.equal(over.statusCode, 429, over.body)
    t.equal(over.json().error, 'rate_limited')
    t.ok(Number(over.headers['retry-after']) > 0, 'with Retry-After')
    t.equal(over.headers['ratelimit-limit'], String(START_RATE.limit))
    const unclaimed = await s.h.app.inject({ method: 'GET', url: '/v1/sso/start?email=eve%40elsewhere.example', remoteAddress: '192.0.2.7' })
    t.equal(unclaimed.statusCode, 429, 'counted before the address is looked up')
    t.equal((await startFrom('192.0.2.8')).statusCode, 200, 'another address is not held')
    s.clock.advance(START_RATE.windowSeconds * 1000)
    t.equal((await startFrom('192.0.2.7')).statusCode, 200, 'the next window lets it start again')
  })

  t.test('looking an address up is rate limited per address (429 with Retry-After): no enumeration of who signs in through a provider', async (t) => {
    const s = await setup(t, build)
    const lookupFrom = (ip: string, email = 'ada@acme.example') =>
      s.h.app.inject({ method: 'GET', url: `/v1/sso/lookup?email=${encodeURIComponent(email)}`, remoteAddress: ip })
    const first = await lookupFrom('192.0.2.9')
    t.same(first.json(), { data: { sso: true, passwordSignIn: true } }, 'a claimed domain is found')
    t.equal(first.headers['ratelimit-limit'], String(LOOKUP_RATE.limit), 'with its RateLimit headers')
    for (let i = 1; i < LOOKUP_RATE.limit; i++) {
      const res = await lookupFrom('192.0.2.9', `user${i}@acme.example`)
      if (res.statusCode !== 200) t.fail(`lookup ${i + 1} of ${LOOKUP_RATE.limit}: ${res.statusCode} ${res.body}`)
    }
    for (const email of ['ada@acme.example', 'eve@elsewhere.example']) {
      const over = await lookupFrom('192.0.2.9', email)
      t.equal(over.statusCode, 429, `${email}: ${over.body}`)
      t.same(Object.keys(over.json()).sort(), ['error', 'limit', 'message', 'retryAfterSeconds', 'windowSeconds'], 'the error envelope, nothing of the address')
      t.equal(over.json().error, 'rate_limited')
      t.ok(Number(over.headers['retry-after']) > 0, 'with Retry-After')
    }
    t.equal((await lookupFrom('192.0.2.10')).statusCode, 200, 'another address is not held')
    t.equal(
      (await s.h.app.inject({ method: 'GET', url: '/v1/sso/start?email=ada%40acme.example', remoteAddress: '192.0.2.9' })).statusCode,
      200,
      'starting is counted apart',
    )
    s.clock.advance(LOOKUP_RATE.windowSeconds * 1000)
    t.equal((await lookupFrom('192.0.2.9')).statusCode, 200, 'the next window lets it look up again')
  })
})
