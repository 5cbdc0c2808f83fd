// Settings → Single sign-on in a real Chromium against a real cloud and a real OpenID provider
// (sso.ts): an admin sets up the OIDC connection (the API's 422 next to the field it names),
// sees the redirect URI, tests the connection, changes it without retyping the client secret
// (never shown back), and removes it; a viewer is offered no link and the page's address says
// what it needs. axe-core in both themes.
import t from 'tap'
import { missingChromium, noSerious, signedIn, textShown } from './console.js'
import { clickButton, GUARD_MS, withProvider } from './sso.js'

const skip = missingChromium(t) ?? false

t.test('an admin sets up, tests, changes and removes the OIDC connection; a viewer may not', { skip }, async (t) => {
  const { c, idp } = await withProvider(t)
  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  await page.goto(`${c.base}/console/settings`)
  await textShown(page, 'Users and roles')
  await Promise.all([page.waitForSelector('#oidc-title', { timeout: GUARD_MS }), page.click('a[href="/console/settings/sso"]')])
  await textShown(page, 'Single sign-on is not set up')

  await page.type('#f-sso-issuer', idp.issuer)
  await page.type('#f-sso-client-id', idp.clientId)
  await page.type('#f-sso-client-secret', idp.clientSecret)
  await page.type('#f-sso-domains', 'acme.example, localhost')
  await page.type('#f-sso-role-claim', 'groups')
  await page.type('#f-sso-role-map', 'signage-admins = admin')
  await clickButton(page, 'Set up single sign-on')
  await page.waitForSelector('#f-sso-domains-error', { timeout: GUARD_MS })
  t.match(await page.$eval('#f-sso-domains-error', (e) => e.textContent), /localhost is not a domain name/, "the API's 422 next to the domains field")
  await noSerious(t, page, 'the SSO page with a field error')

  await page.$eval('#f-sso-domains', (e) => {
    ;(e as unknown as { value: string }).value = ''
  })
  await page.type('#f-sso-domains', 'acme.example')
  await clickButton(page, 'Set up single sign-on')
  await textShown(page, `${c.base}/v1/sso/oidc/callback`)
  t.pass('the redirect URI to register is shown')
  const stored = (await c.call('GET', '/v1/sso')).body.data
  t.equal(stored.issuer, idp.issuer)
  t.same(stored.emailDomains, ['acme.example'])
  t.same(stored.roleMap, { 'signage-admins': 'admin' }, 'the role mapping typed as lines')
  t.equal(await page.$eval('#f-sso-client-secret', (e) => (e as unknown as { value: string }).value), '', 'the secret is not shown back')
  t.notOk(await page.evaluate(`document.documentElement.outerHTML.includes(${JSON.stringify(idp.clientSecret)})`), 'nor anywhere in the page')
  await textShown(page, 'stored (never shown)')

  await clickButton(page, 'Test connection')
  await textShown(page, `The connection works: ${idp.issuer} answered its discovery document`)
  await noSerious(t, page, 'the SSO page set up (light)')
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }])
  await noSerious(t, page, 'the SSO page set up (dark)')

  // A change without the secret keeps the stored one.
  await page.select('#f-sso-password', 'all')
  await clickButton(page, 'Save changes')
  await textShown(page, 'Saved.')
  const changed = (await c.call('GET', '/v1/sso')).body.data
  t.equal(changed.passwordSignIn, 'all', 'the password rule changed')
  t.equal(changed.clientSecretSet, true, 'the stored secret kept')

  await clickButton(page, 'Remove single sign-on')
  await clickButton(page, 'Yes, Remove single sign-on')
  await textShown(page, 'Single sign-on is not set up')
  t.equal((await c.call('GET', '/v1/sso')).status, 404, 'removed')

  const viewer = await signedIn(t, c, 'vera@example.com', 'viewer')
  await viewer.goto(`${c.base}/console/settings`)
  await viewer.waitForFunction("document.querySelector('h1#page-title')?.textContent === 'Settings'", { timeout: GUARD_MS })
  t.equal(await viewer.$('a[href="/console/settings/sso"]'), null, 'a viewer is offered no link')
  await viewer.goto(`${c.base}/console/settings/sso`)
  await textShown(viewer, 'Your role may not see single sign-on (it needs user.manage)')
  t.pass('the direct address says what it needs')
})
