// Single sign-on in the browser tests: a cloud whose outbound checks let the loopback OpenID
// provider through (oidc-provider on https://localhost, fixtures/oidcProvider.ts), the
// provider with the cloud's callback registered, and a browser walking the provider's pages.
import type { Test } from 'tap'
import type { Page } from 'puppeteer-core'
import { CA_FILE } from '../fixtures/receiver.js'
import { startOidcProvider, type TestProvider } from '../fixtures/oidcProvider.js'
import { clickButton, launch, startConsoleCloud, type ConsoleCloud, retype } from './console.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

/** The hang guard of every wait on the browser (a busy machine is slow, not stuck). */
export const GUARD_MS = HANG_GUARD_MS

/** Outbound checks that let the test provider through (its certificate is the test CA's). */
export const PROVIDER_REACHABLE = { webhookAllowHosts: ['localhost'], webhookCaFile: CA_FILE }

export async function withProvider(t: Test): Promise<{ c: ConsoleCloud; idp: TestProvider }> {
  const c = await startConsoleCloud(t, { config: PROVIDER_REACHABLE })
  const idp = await startOidcProvider({ redirectUris: [`${c.base}/v1/sso/oidc/callback`] })
  t.after(() => idp.close())
  return { c, idp }
}

/** The provider's OIDC settings for PUT /v1/sso. */
export function oidcSettings(idp: TestProvider, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { protocol: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, emailDomains: ['acme.example'], ...extra }
}

/**
 * A fresh browser context of the shared Chromium that accepts the provider's test certificate
 * (the cloud checks it against the test CA; the browser only visits the provider's pages),
 * and sends nothing off the machine (the provider's pages ask for a web font).
 */
export async function ssoBrowser(t: Test, dark = false): Promise<Page> {
  const { page } = await launch(t, { dark })
  const cdp = await page.createCDPSession()
  await cdp.send('Security.setIgnoreCertificateErrors', { ignore: true })
  await page.setRequestInterception(true)
  page.on('request', (r) => {
    const host = new URL(r.url()).hostname
    if (host === 'localhost' || host === '127.0.0.1') void r.continue()
    else void r.abort('blockedbyclient')
  })
  return page
}

/** Opens the sign-in page, types `email` and waits for Continue with SSO. */
export async function emailFirst(page: Page, c: ConsoleCloud, email: string): Promise<void> {
  await page.goto(`${c.base}/console/`)
  await page.waitForSelector('#f-email', { timeout: GUARD_MS })
  await page.type('#f-email', email)
  await page.waitForFunction("[...document.querySelectorAll('button')].some((b) => b.textContent.trim() === 'Continue with SSO')", { timeout: GUARD_MS })
}

/** Clicks Continue with SSO and goes through the provider's login (as `login`) and consent pages; answers where the browser ends. */
export async function throughProvider(page: Page, idp: TestProvider, login: string): Promise<string> {
  await Promise.all([page.waitForNavigation({ timeout: GUARD_MS }), clickButton(page, 'Continue with SSO')])
  if (!page.url().startsWith(idp.issuer)) throw new Error(`the browser went to ${page.url()}, not the provider`)
  await page.waitForSelector('input[name=login]', { timeout: GUARD_MS })
  // The provider fills the field with the login hint (the address typed in the console).
  await retype(page, 'input[name=login]', login)
  await page.type('input[name=password]', 'any password')
  await Promise.all([page.waitForNavigation({ timeout: GUARD_MS }), page.click('button[type=submit]')])
  // The consent page (the first sign-in of the account to this client).
  if (page.url().startsWith(idp.issuer)) await Promise.all([page.waitForNavigation({ timeout: GUARD_MS }), page.click('button[type=submit]')])
  return page.url()
}
