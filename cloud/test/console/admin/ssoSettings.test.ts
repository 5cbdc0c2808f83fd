// Settings → Single sign-on in a real Chromium against a real cloud (one for the file) and a
// real OpenID provider (sso.ts): an admin sets up the OIDC connection (the API's 422 next to the
// field it names), sees the redirect URI, tests the connection, changes it without retyping the
// client secret (never shown back), and removes it; a viewer is offered no link and the page's
// address says what it needs. Then SAML: the provider's metadata (a bad document's 422 next to
// it), this workspace's entity ID, ACS and metadata URLs shown, the test, a change that keeps
// the stored provider, the provider given by URL and certificate instead; and the SCIM token
// shown once with the base URL, working, replaced (the old one stops) and revoked. axe-core in
// both themes.
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { startOidcProvider } from '../../fixtures/oidcProvider.js'
import { IDP_CERT, IDP_ENTITY_ID, IDP_SSO_URL, idpMetadata } from '../../fixtures/samlIdp.js'
import { clickButton, fileCloud, missingChromium, noSerious, signedIn, textShown, retype } from '../console.js'
import { GUARD_MS, PROVIDER_REACHABLE } from '../sso.js'

const skip = missingChromium(t) ?? false
const cloud = fileCloud({ config: PROVIDER_REACHABLE })

/** Sets a field's value as pasting does (one input event: long XML typed key by key is slow). */
async function paste(page: Page, selector: string, value: string): Promise<void> {
  await page.$eval(
    selector,
    (e, v) => {
      const el = e as unknown as { value: string; dispatchEvent(ev: unknown): boolean }
      el.value = v as string
      el.dispatchEvent(new Event('input', { bubbles: true }))
    },
    value,
  )
}

t.test('an admin sets up, tests, changes and removes the OIDC connection; a viewer may not', { skip }, async (t) => {
  const c = await cloud(t)
  const idp = await startOidcProvider({ redirectUris: [`${c.base}/v1/sso/oidc/callback`] })
  t.after(() => idp.close())
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

  await retype(page, '#f-sso-domains', 'acme.example')
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

t.test('an admin sets up SAML from metadata or by hand, and creates, replaces and revokes the SCIM token', { skip }, async (t) => {
  const c = await cloud(t)
  const page = await signedIn(t, c, 'sam@example.com', 'admin')
  await page.goto(`${c.base}/console/settings/sso`)
  await textShown(page, 'Single sign-on is not set up')
  await page.click('input[name=sso-protocol][value=saml]')
  await page.waitForSelector('#saml-title', { timeout: GUARD_MS })

  await paste(page, '#f-saml-metadata', '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>')
  await page.type('#f-sso-domains', 'saml.example')
  await page.type('#f-sso-role-claim', 'groups')
  await page.type('#f-sso-role-map', 'signage-editors = editor')
  await clickButton(page, 'Set up single sign-on')
  await page.waitForSelector('#f-saml-metadata-error', { timeout: GUARD_MS })
  t.match(
    await page.$eval('#f-saml-metadata-error', (e) => e.textContent),
    /no EntityDescriptor with an IDPSSODescriptor/,
    "the API's 422 next to the metadata",
  )
  await noSerious(t, page, 'the SAML form with a field error')

  await paste(page, '#f-saml-metadata', idpMetadata())
  await clickButton(page, 'Set up single sign-on')
  const stored = await (async () => {
    await textShown(page, 'Assertion consumer service URL')
    return (await c.call('GET', '/v1/sso')).body.data
  })()
  t.equal(stored.protocol, 'saml')
  t.equal(stored.entryPoint, IDP_SSO_URL, "the sign-in URL read from the provider's metadata")
  t.equal(stored.roleAttribute, 'groups')
  t.same(stored.roleMap, { 'signage-editors': 'editor' })
  for (const [what, url] of [
    ['entity ID', stored.spEntityId],
    ['ACS URL', stored.acsUrl],
    ['SP metadata URL', stored.metadataUrl],
  ])
    t.ok(
      await page.evaluate(`[...document.querySelectorAll('dd code')].some((e) => e.textContent === ${JSON.stringify(url)})`),
      `the ${what} to register is shown`,
    )
  const metadata = await fetch(stored.metadataUrl.replace(/^https?:\/\/[^/]+/, c.base))
  t.equal(metadata.status, 200, 'the SP metadata URL shown answers')

  await clickButton(page, 'Test connection')
  await textShown(page, `The settings hold: sign-in goes to ${IDP_SSO_URL}, and 1 signing certificate is valid today.`)
  await noSerious(t, page, 'the SAML connection set up (light)')

  // A change of the password rule keeps the stored provider (the metadata field left empty).
  t.equal(await page.$eval('#f-saml-metadata', (e) => (e as unknown as { value: string }).value), '', 'the metadata field is empty after saving')
  await page.select('#f-sso-password', 'all')
  await clickButton(page, 'Save changes')
  await textShown(page, 'Saved.')
  const changed = (await c.call('GET', '/v1/sso')).body.data
  t.equal(changed.passwordSignIn, 'all')
  t.equal(changed.idpCertificates.length, 1, 'the certificate kept')

  // By hand: sign-in URL, entity ID and certificate.
  await page.click('input[name=saml-by][value=hand]')
  await page.waitForSelector('#f-saml-entry-point', { timeout: GUARD_MS })
  await page.type('#f-saml-entry-point', 'https://idp.example/other/sso')
  await page.type('#f-saml-idp-issuer', IDP_ENTITY_ID)
  await paste(page, '#f-saml-certificate', IDP_CERT)
  await clickButton(page, 'Save changes')
  await textShown(page, 'https://idp.example/other/sso')
  const byHand = (await c.call('GET', '/v1/sso')).body.data
  t.equal(byHand.entryPoint, 'https://idp.example/other/sso', 'the sign-in URL typed')
  t.equal(byHand.idpIssuer, IDP_ENTITY_ID)

  // The SCIM token: shown once with the base URL, and it is the one that works.
  await textShown(page, 'none: provisioning is off')
  await clickButton(page, 'Create a SCIM token')
  await page.waitForSelector('.secret-value', { timeout: GUARD_MS })
  const token = await page.$eval('.secret-value', (e) => e.textContent ?? '')
  t.match(token, /^scim_[A-Za-z0-9]{43}$/, 'the token is shown')
  await textShown(page, `${c.base}/scim/v2`)
  await noSerious(t, page, 'the SCIM token shown')
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }])
  await noSerious(t, page, 'the SCIM token shown (dark)')
  const users = (bearer: string) => fetch(`${c.base}/scim/v2/Users`, { headers: { authorization: `Bearer ${bearer}` } })
  t.equal((await users(token)).status, 200, 'the token shown lets the provider in')
  await clickButton(page, 'Done')
  await page.waitForFunction("!document.querySelector('.secret-value')", { timeout: GUARD_MS })
  t.notOk(await page.evaluate(`document.documentElement.outerHTML.includes(${JSON.stringify(token)})`), 'and is not shown again')

  await clickButton(page, 'Replace the SCIM token')
  await page.waitForSelector('.secret-value', { timeout: GUARD_MS })
  const second = await page.$eval('.secret-value', (e) => e.textContent ?? '')
  t.not(second, token)
  t.equal((await users(token)).status, 401, 'the earlier token stops at once')
  t.equal((await users(second)).status, 200)

  await clickButton(page, 'Revoke the SCIM token')
  await clickButton(page, 'Yes, Revoke the SCIM token')
  await textShown(page, 'none: provisioning is off')
  t.equal((await users(second)).status, 401, 'revoked')

  await clickButton(page, 'Remove single sign-on')
  await clickButton(page, 'Yes, Remove single sign-on')
  await textShown(page, 'Single sign-on is not set up')
})
