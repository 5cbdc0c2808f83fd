// Continue with SSO through a SAML 2.0 identity provider in a real Chromium against a real
// cloud: the sign-in page asks for the e-mail first, offers Continue with SSO for the claimed
// domain, the browser is sent to the provider's sign-in URL with the AuthnRequest, and the
// provider (a stand-in answering that URL inside the browser: a page whose form posts the
// signed SAMLResponse to the ACS, as Okta's and Entra ID's pages do, signed as the SAML tests
// sign it, fixtures/samlIdp.ts) sends it back to the cloud, which signs the person in and
// forwards the browser to the console, with the role the assertion's groups map to.
import t from 'tap'
import { authnRequestOf, IDP_CERT, IDP_ENTITY_ID, IDP_SSO_URL, samlResponse } from '../../fixtures/samlIdp.js'
import { clickButton, launch, missingChromium, startConsoleCloud } from '../console.js'
import { emailFirst, GUARD_MS, PROVIDER_REACHABLE } from '../sso.js'

const skip = missingChromium(t) ?? false

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;')

t.test('Continue with SSO through a SAML provider: the AuthnRequest out, a signed assertion back, signed in', { skip }, async (t) => {
  const c = await startConsoleCloud(t, { config: PROVIDER_REACHABLE })
  const put = await c.call('PUT', '/v1/sso', {
    protocol: 'saml',
    entryPoint: IDP_SSO_URL,
    idpCertificate: IDP_CERT,
    idpIssuer: IDP_ENTITY_ID,
    emailDomains: ['acme.example'],
    roleAttribute: 'groups',
    roleMap: { 'signage-editors': 'editor' },
  })
  t.equal(put.status, 201, JSON.stringify(put.body))
  const { spEntityId } = put.body.data as { spEntityId: string }

  const { page } = await launch(t)
  // The provider's sign-in URL is answered in the browser by the stand-in; nothing else leaves the machine.
  const requests: { id: string; acs: string; issuer: string }[] = []
  await page.setRequestInterception(true)
  page.on('request', (r) => {
    const url = r.url()
    if (url.startsWith(IDP_SSO_URL)) {
      const req = authnRequestOf(url)
      requests.push(req)
      const response = samlResponse({
        inResponseTo: req.id,
        email: 'grace@acme.example',
        audience: spEntityId,
        recipient: req.acs,
        now: new Date(),
        attributes: { groups: ['signage-editors'], displayName: ['Grace Hopper'] },
      })
      void r.respond({
        status: 200,
        contentType: 'text/html',
        body:
          '<!doctype html><html lang="en"><head><title>Identity provider</title></head><body>' +
          `<form method="post" action="${esc(req.acs)}"><input type="hidden" name="SAMLResponse" value="${esc(response)}"><input type="hidden" name="RelayState" value=""></form>` +
          '<script>document.forms[0].submit()</script></body></html>',
      })
      return
    }
    const host = new URL(url).hostname
    if (host === 'localhost' || host === '127.0.0.1') void r.continue()
    else void r.abort('blockedbyclient')
  })

  await emailFirst(page, c, 'grace@acme.example')
  // Sent to the provider, back through the ACS, forwarded to the console: the console's title once signed in.
  await Promise.all([page.waitForNavigation({ timeout: GUARD_MS }), clickButton(page, 'Continue with SSO')])
  // The console's title once signed in, or the page saying why the answer was refused.
  await page
    .waitForFunction("!!document.querySelector('h1#page-title') || !!document.querySelector('p[role=alert]')", { timeout: GUARD_MS })
    .catch(async (e: unknown) => {
      const text = await page.evaluate('document.body ? document.body.innerText.slice(0, 500) : null').catch(() => null)
      throw new Error(`waited for the console signed in, or the refusal page: at ${page.url()}, showing ${JSON.stringify(text)} (${String(e)})`)
    })
  const refused = await page.evaluate("document.querySelector('p[role=alert]')?.textContent ?? null")
  t.equal(refused, null, `not refused (at ${page.url()})`)
  t.equal(requests.length, 1, 'the browser went to the provider once, with an AuthnRequest')
  t.equal(requests[0]!.issuer, spEntityId, "the AuthnRequest names this workspace's entity ID")
  t.match(requests[0]!.acs, `${c.base}/v1/sso/saml/acs`, "and this cloud's ACS")
  t.equal(new URL(page.url()).pathname, '/console/', 'the ACS forwarded the browser to the console')
  const me = (await page.evaluate("fetch('/v1/me').then((r) => r.json())")) as { data: { actor: { email: string }; permissions: string[] } }
  t.equal(me.data.actor.email, 'grace@acme.example', 'signed in as the address the assertion vouched for')
  t.ok(me.data.permissions.includes('screen.view'), 'with the permissions of a role')
  t.notOk(me.data.permissions.includes('user.manage'), 'an editor’s: no user.manage (the groups map to editor, not admin)')
  const users = (await c.call('GET', '/v1/users')).body.data as { email: string; role: string }[]
  t.equal(users.find((u) => u.email === 'grace@acme.example')?.role, 'editor', 'the user was made at the first sign-in, with the mapped role')
})
