// The settings page in a real Chromium against a real cloud: inviting a user shows the invite
// link once; an API key's secret is shown once (gone after a reload) and works as a bearer;
// a location with one under it answers 409 on delete, shown in words; a 422 is shown next to
// the field it names; a viewer is offered no invite or create controls; keyboard and axe-core.
import t from 'tap'
import type { Page } from 'puppeteer-core'
import {
  clickButton,
  docShot,
  missingChromium,
  PAGE_WAIT_MS,
  seriousViolations,
  startConsoleCloud,
  textShown,
  type ConsoleCloud,
  signedIn,
  retype,
} from '../console.js'

const skip = missingChromium(t) ?? false

async function settings(page: Page, c: ConsoleCloud): Promise<void> {
  await page.goto(`${c.base}/console/settings`)
  await page.waitForFunction("document.querySelector('h1#page-title')?.textContent === 'Settings'")
  await textShown(page, 'Users and roles')
}

t.test('users: a 422 next to the email field; an invite shows its link once', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  await settings(page, c)
  t.ok((await page.$$eval('nav[aria-label=Main] a', (as) => as.map((a) => a.textContent))).includes('Settings'), 'Settings is in the navigation')

  await page.type('#f-invite-email', 'ab')
  await clickButton(page, 'Invite')
  await page.waitForSelector('#f-invite-email-error')
  t.match(await page.$eval('#f-invite-email-error', (e) => e.textContent), /email/, "the API's 422 is shown next to the email field")
  t.equal(await page.$eval('#f-invite-email', (e) => e.getAttribute('aria-describedby')), 'f-invite-email-error')
  t.same(await seriousViolations(page), [], 'settings with a field error: no serious axe-core violation')

  await retype(page, '#f-invite-email', 'bob@example.com')
  await page.type('#f-invite-name', 'Bob')
  await page.select('#f-invite-role', 'editor')
  await clickButton(page, 'Invite')
  await page.waitForSelector('.secret')
  const link = (await page.$eval('.secret-value', (e) => e.textContent)) ?? ''
  t.match(link, new RegExp(`^${c.base}/console/.*#`), 'the invite link is shown')
  await textShown(page, 'bob@example.com')
  await docShot(page, 'settings')
  const users = await c.call('GET', '/v1/users')
  t.equal(users.body.data.find((u: { email: string }) => u.email === 'bob@example.com')?.role, 'editor', 'invited with the role chosen')
  await clickButton(page, 'Done')
  t.equal(await page.$('.secret'), null, 'dismissed')
  await settings(page, c)
  await textShown(page, 'bob@example.com')
  t.notOk(await page.evaluate(`document.body.innerText.includes(${JSON.stringify(link)})`), 'the link is not shown again')

  // A new link for the invited user; changing the role.
  await clickButton(page, 'New invite link')
  await page.waitForSelector('.secret')
  t.not(await page.$eval('.secret-value', (e) => e.textContent), link, 'a new invite link')
  await page.select('select[aria-label="Role of bob@example.com"]', 'viewer')
  for (const guardEnd = Date.now() + PAGE_WAIT_MS; Date.now() < guardEnd; ) {
    const u = (await c.call('GET', '/v1/users')).body.data.find((x: { email: string }) => x.email === 'bob@example.com')
    if (u.role === 'viewer') break
    await new Promise((r) => setTimeout(r, 100))
  }
  t.equal((await c.call('GET', '/v1/users')).body.data.find((x: { email: string }) => x.email === 'bob@example.com')?.role, 'viewer', 'role changed')
})

t.test('API keys: the secret once, gone after a reload, works as a bearer; locations: 409 when deleting a used one', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  await settings(page, c)
  await page.type('#f-key-name', 'Reporting')
  await clickButton(page, 'Create key')
  await page.waitForSelector('.secret')
  const secret = ((await page.$eval('.secret-value', (e) => e.textContent)) ?? '').trim()
  await textShown(page, 'it will not be shown again')
  t.ok(secret.length > 16, 'the secret is shown')
  const me = await fetch(`${c.base}/v1/me`, { headers: { authorization: `Bearer ${secret}` } })
  t.equal(me.status, 200, 'the secret works as a bearer against /v1/me')
  await page.$eval('.secret', (e) => e.scrollIntoView())
  await docShot(page, 'settings-api-key')
  await page.reload()
  await textShown(page, 'Reporting')
  t.notOk(await page.evaluate(`document.body.innerText.includes(${JSON.stringify(secret)})`), 'after a reload the secret is not shown')
  t.equal(await page.$('.secret'), null)
  await clickButton(page, 'Revoke Reporting')
  await clickButton(page, 'Yes, Revoke Reporting')
  await page.waitForFunction("[...document.querySelectorAll('#keys ~ table td')].some((td) => td.textContent === 'revoked')")
  t.equal((await fetch(`${c.base}/v1/me`, { headers: { authorization: `Bearer ${secret}` } })).status, 401, 'revoked: the secret no longer works')

  // Locations: add a store and a floor inside it; deleting the store answers 409 in words.
  await page.type('#f-node-name', 'Store 7')
  await clickButton(page, 'Add')
  await page.waitForFunction("[...document.querySelectorAll('#f-node-parent option')].some((o) => o.textContent === 'Store 7')")
  const storeId = await page.evaluate("[...document.querySelectorAll('#f-node-parent option')].find((o) => o.textContent === 'Store 7').value")
  await page.type('#f-node-name', 'Floor 1')
  await page.select('#f-node-parent', String(storeId))
  await clickButton(page, 'Add')
  await textShown(page, 'Floor 1')
  await clickButton(page, 'Delete Store 7')
  await clickButton(page, 'Yes, Delete Store 7')
  await textShown(page, 'still has 1 location(s) under it')
  t.pass("the API's 409 node_not_empty message is shown")
  await clickButton(page, 'Rename Floor 1')
  await page.waitForSelector('#f-rename')
  await page.type('#f-rename', ' east')
  await clickButton(page, 'Save')
  await textShown(page, 'Floor 1 east')
  t.pass('renamed')
  t.same(await seriousViolations(page), [], 'settings: no serious axe-core violation')
  await page.$eval('#locations', (e) => e.scrollIntoView())
  await docShot(page, 'settings-locations')
})

t.test('a viewer is offered no invite or create controls; keyboard reaches the controls', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const page = await signedIn(t, c, 'vera@example.com', 'viewer')
  await page.goto(`${c.base}/console/settings`)
  await page.waitForFunction("document.querySelector('h1#page-title')?.textContent === 'Settings'")
  t.equal(await page.$('#f-invite-email'), null, 'no invite form')
  t.equal(await page.$('#f-key-name'), null, 'no API key form')
  t.equal(await page.$('#f-node-name'), null, 'no location form')
  t.same(await seriousViolations(page), [], 'settings as a viewer: no serious axe-core violation')

  const admin = await signedIn(t, c, 'ada@example.com', 'admin')
  await settings(admin, c)
  const reached = new Set<string>()
  for (let i = 0; i < 60; i++) {
    await admin.keyboard.press('Tab')
    reached.add(String(await admin.evaluate("document.activeElement?.id || document.activeElement?.textContent?.trim() || ''")))
  }
  for (const want of ['f-invite-email', 'f-invite-role', 'Invite', 'f-key-name', 'Create key']) t.ok(reached.has(want), `Tab reaches ${want}`)
})
