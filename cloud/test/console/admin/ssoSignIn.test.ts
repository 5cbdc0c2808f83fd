// Continue with SSO in a real Chromium against a real cloud and a real OpenID provider
// (oidc-provider, sso.ts): the sign-in page offers it for a claimed e-mail domain only, the
// browser goes through the provider's login and consent pages and comes back to the console
// signed in, with the role the provider's claim maps to. axe-core in both themes.
import t from 'tap'
import { missingChromium, noSerious, textShown } from '../console.js'
import { emailFirst, GUARD_MS, oidcSettings, ssoBrowser, throughProvider, withProvider } from '../sso.js'

const skip = missingChromium(t) ?? false

t.test('Continue with SSO: offered for a claimed domain, through the provider and back signed in', { skip }, async (t) => {
  const { c, idp } = await withProvider(t)
  idp.accounts.set('ada', { email: 'ada@acme.example', name: 'Ada Lovelace', groups: ['signage-admins'] })
  const put = await c.call('PUT', '/v1/sso', oidcSettings(idp, { roleClaim: 'groups', roleMap: { 'signage-admins': 'admin' } }))
  t.equal(put.status, 201, JSON.stringify(put.body))

  const page = await ssoBrowser(t)
  await page.goto(`${c.base}/console/`)
  await page.waitForSelector('#f-email', { timeout: GUARD_MS })
  await page.type('#f-email', 'someone@unclaimed.example')
  // The lookup of an unclaimed domain answers no: the password form as ever, no SSO.
  await page.waitForResponse((r) => r.url().includes('/v1/sso/lookup?email=someone%40unclaimed.example'), { timeout: GUARD_MS })
  await page.waitForNetworkIdle({ idleTime: 200, timeout: GUARD_MS })
  t.notOk(await page.evaluate("document.body.innerText.includes('Continue with SSO')"), 'an unclaimed domain is offered no SSO')

  await emailFirst(page, c, 'ada@acme.example')
  t.ok(await page.$('#f-password'), 'owners keep password sign-in (the default): the password field stays')
  await textShown(page, 'Your organisation signs you in through its identity provider')
  await noSerious(t, page, 'sign-in offering SSO (light)')
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }])
  await noSerious(t, page, 'sign-in offering SSO (dark)')

  const end = await throughProvider(page, idp, 'ada')
  t.match(end, `${c.base}/v1/sso/oidc/callback?code=`, 'the provider sent the browser back to the callback')
  await page.waitForSelector('h1#page-title', { timeout: GUARD_MS })
  t.equal(new URL(page.url()).pathname, '/console/', 'and the callback forwarded it to the console')
  await textShown(page, 'Ada Lovelace')
  const me = (await page.evaluate("fetch('/v1/me').then((r) => r.json())")) as { data: { actor: { email: string }; permissions: string[] } }
  t.equal(me.data.actor.email, 'ada@acme.example', 'signed in as the address the provider vouched for')
  t.ok(me.data.permissions.includes('user.manage'), 'with the role its groups claim maps to (admin)')
  const users = (await c.call('GET', '/v1/users')).body.data as { email: string; role: string }[]
  t.equal(users.find((u) => u.email === 'ada@acme.example')?.role, 'admin', 'the user was made on the first sign-in')
})
