// Single sign-on refused, said in words in a real Chromium: the provider vouches for an
// address of a domain the workspace does not claim (the callback's page says so and leads
// back to the sign-in page, no session), a callback opened in a browser that did not start
// the sign-in (ssoProviderDown.test.ts: a provider that cannot be reached). axe-core on the page.
import t from 'tap'
import { missingChromium, noSerious, textShown } from '../console.js'
import { emailFirst, GUARD_MS, oidcSettings, ssoBrowser, throughProvider, withProvider } from '../sso.js'

const skip = missingChromium(t) ?? false

t.test('refused by the callback: an address the workspace does not claim, a sign-in of another browser', { skip }, async (t) => {
  const { c, idp } = await withProvider(t)
  idp.accounts.set('mallory', { email: 'mallory@elsewhere.example', name: 'Mallory' })
  t.equal((await c.call('PUT', '/v1/sso', oidcSettings(idp))).status, 201)

  const page = await ssoBrowser(t, true)
  await emailFirst(page, c, 'mallory@acme.example')
  await throughProvider(page, idp, 'mallory')
  await textShown(page, 'mallory@elsewhere.example is not of an e-mail domain this workspace claims')
  t.equal(await page.$eval('h1', (h) => h.textContent), 'Single sign-on did not sign you in', 'the refusal in words, not an error body')
  const session = await page.evaluate("fetch('/v1/session').then((r) => r.status)")
  t.equal(session, 401, 'no session')
  await noSerious(t, page, 'the refusal page (dark)')
  await Promise.all([page.waitForNavigation({ timeout: GUARD_MS }), page.click('a[href="/console/"]')])
  await page.waitForSelector('#f-email', { timeout: GUARD_MS })
  t.pass('the refusal page leads back to the sign-in page')

  // The callback opened in a browser that did not start the sign-in (no state cookie).
  await page.goto(`${c.base}/v1/sso/oidc/callback?code=abc&state=not-ours`)
  await textShown(page, 'This sign-in was not started in this browser: start it again.')
  t.pass('a callback of another browser is refused in words')
  const api = await fetch(`${c.base}/v1/sso/oidc/callback?code=abc&state=not-ours`)
  t.equal(api.status, 400, 'an API client still gets the status')
  t.equal(((await api.json()) as { error: string }).error, 'bad_request', 'and the error envelope')
})
