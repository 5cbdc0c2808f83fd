// Single sign-on on the sign-in page in a real Chromium when the provider cannot be reached
// (said in words, the browser stays), for a domain whose provider is the only way in (no
// password field). axe-core on the page.
import t from 'tap'
import { clickButton, missingChromium, noSerious, startConsoleCloud, textShown } from '../console.js'
import { emailFirst, PROVIDER_REACHABLE, ssoBrowser } from '../sso.js'

const skip = missingChromium(t) ?? false

t.test('a provider that cannot be reached, and a domain whose provider is the only way in', { skip }, async (t) => {
  const c = await startConsoleCloud(t, { config: PROVIDER_REACHABLE })
  // Nothing listens on port 1: discovery fails when the sign-in starts.
  const put = await c.call('PUT', '/v1/sso', {
    protocol: 'oidc',
    issuer: 'https://localhost:1',
    clientId: 'c',
    clientSecret: 's',
    emailDomains: ['down.example'],
    passwordSignIn: 'none',
  })
  t.equal(put.status, 201, JSON.stringify(put.body))
  const page = await ssoBrowser(t)
  await emailFirst(page, c, 'ops@down.example')
  t.equal(await page.$('#f-password'), null, 'password sign-in is off for the domain: no password field')
  await textShown(page, 'password sign-in is off for this address')
  await clickButton(page, 'Continue with SSO')
  await textShown(page, 'The identity provider cannot be reached')
  t.equal(new URL(page.url()).pathname, '/console/', 'the browser stays on the sign-in page')
  await noSerious(t, page, 'sign-in with the provider down')
})
