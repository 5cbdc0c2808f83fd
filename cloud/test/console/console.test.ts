// The console in a real Chromium against a real cloud: served at /console/ with a strict CSP
// and `/` leading there; an invite link → a password → signed in; sign-in and sign-out; the
// screens table at 10,000 screens rendering only what is in view and scrolling to the end;
// a real device going offline showing in the table within 5 s; a screen's page; what a
// viewer's role may not do not offered; usable by keyboard; no serious or critical axe-core
// violation on any page, light and dark.
import { gzipSync } from 'node:zlib'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { topics } from '@svc/shared/mqtt/index'
import { servicesOf } from '../../src/app.js'
import { CONSOLE_CSP } from '../../src/domains/console/index.js'
import { connectDevice, droppedAtBroker } from '../devicelink/link.js'
import { screenRow } from '../fixtures/screenRows.js'
import {
  clickAnswered,
  consoleDir,
  docShot,
  emptyField,
  launch,
  missingChromium,
  noSerious,
  PASSWORD,
  retype,
  startConsoleCloud,
  textShown,
  type ConsoleCloud,
} from './console.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

/** Why the browser tests skip (Chromium missing outside CI; with CI=true that fails instead). */
const skip = missingChromium(t) ?? false

async function invite(c: ConsoleCloud, email: string, role: string): Promise<string> {
  const r = await c.call('POST', '/v1/users', { email, role, name: email.split('@')[0] })
  if (r.status !== 201) throw new Error(`invite: ${r.status} ${JSON.stringify(r.body)}`)
  return `${c.base}${r.body.data.inviteUrl}`
}

/** Follows an invite link in the browser and sets the password: signed in on the dashboard. */
async function acceptInvite(page: Page, url: string): Promise<void> {
  await page.goto(url)
  await page.waitForSelector('#f-password')
  await page.type('#f-password', PASSWORD)
  await page.click('button[type=submit]')
  await page.waitForSelector('h1#page-title')
}

t.test('the built console is small, and served with a CSP that allows no inline script', async (t) => {
  const dir = await consoleDir()
  const js = fs.readFileSync(path.join(dir, 'app.js'))
  const gz = gzipSync(js).length
  t.ok(gz < 300 * 1024, `app.js is ${Math.round(gz / 1024)} KB compressed (under 300 KB)`)
  t.notMatch(fs.readFileSync(path.join(dir, 'index.html'), 'utf8'), /<script(?![^>]*\bsrc=)/, 'index.html has no inline script')
  const c = await startConsoleCloud(t)
  // Every answer is read to its end: an answer left unread holds its connection open, and the
  // cloud's close waits for it (the keep-alive timeout, 72 s).
  const get = async (p: string, init?: RequestInit) => {
    const r = await fetch(`${c.base}${p}`, init)
    await r.arrayBuffer()
    return r
  }
  const root = await get('/', { redirect: 'manual' })
  t.equal(root.status, 302)
  t.equal(root.headers.get('location'), '/console/')
  for (const p of ['/console/', '/console/screens/scr_x', '/console/app.js', '/console/app.css']) {
    const r = await get(p)
    t.equal(r.status, 200, p)
    t.equal(r.headers.get('content-security-policy'), CONSOLE_CSP, `${p}: CSP`)
    t.notMatch(r.headers.get('content-security-policy') ?? '', /unsafe-inline|unsafe-eval/)
  }
  t.match((await get('/console/screens')).headers.get('content-type'), /^text\/html/, 'a deep link answers the page')
  t.equal((await get('/console/inputs.json')).status, 404, 'the build record is not served')
})

t.test('invite link, password, dashboard, sign-out and sign-in, in a real browser', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const { page } = await launch(t)
  const url = await invite(c, 'ada@example.com', 'admin')

  await page.goto(`${c.base}/`)
  await page.waitForSelector('h1')
  t.equal(await page.$eval('h1', (h) => h.textContent), 'Sign in', '/ leads to the sign-in page')
  await noSerious(t, page, 'sign-in page')
  await docShot(page, 'sign-in')

  await page.goto(url)
  await page.waitForSelector('#f-password')
  t.equal(await page.$eval('label[for=f-password]', (l) => l.textContent), 'New password')
  await page.type('#f-password', 'too short')
  await page.click('button[type=submit]')
  await page.waitForSelector('#f-password-error')
  t.match(await page.$eval('#f-password-error', (e) => e.textContent), /at least 12 characters/, "the API's 422 is shown next to the field")
  t.equal(await page.$eval('#f-password', (e) => e.getAttribute('aria-describedby')), 'f-password-error')
  await noSerious(t, page, 'welcome page with an error')
  await docShot(page, 'welcome')
  await retype(page, '#f-password', PASSWORD)
  await page.click('button[type=submit]')
  await page.waitForSelector('h1#page-title')
  t.equal(await page.$eval('h1#page-title', (h) => h.textContent), 'Dashboard')
  t.equal(new URL(page.url()).hash, '', 'the token is gone from the address bar')
  const nav = await page.$$eval('nav[aria-label=Main] a', (as) => as.map((a) => a.textContent))
  t.same(nav.slice(0, 2), ['Dashboard', 'Screens'])
  await noSerious(t, page, 'dashboard')
  await docShot(page, 'dashboard')

  // Sign out, then sign in with email and password.
  await page.click('header.top button')
  await page.waitForSelector('#f-email')
  t.equal(
    (await page.cookies()).find((k) => k.name === 'svc_session'),
    undefined,
    'the session cookie is gone',
  )
  await page.type('#f-email', 'ada@example.com')
  await page.type('#f-password', 'wrong password!')
  t.equal((await clickAnswered(page, 'button[type=submit]', 'POST', '/v1/session')).status(), 401)
  await textShown(page, 'The email or password is wrong.')
  // The right password, naming a workspace the address has no account in: refused as a wrong one.
  const other = await servicesOf(c.running.app).workspaces.create('Elsewhere', 'us')
  await retype(page, '#f-password', PASSWORD)
  await page.click('details summary')
  await page.waitForSelector('#f-workspaceId', { visible: true })
  await noSerious(t, page, 'sign-in page with the workspace field open')
  await page.type('#f-workspaceId', other.id)
  // The same words as the first refusal: read once this submit's answer has come.
  t.equal((await clickAnswered(page, 'button[type=submit]', 'POST', '/v1/session')).status(), 401)
  await textShown(page, 'The email or password is wrong.')
  // Emptied again (as a person does: select all, delete): the address's one account.
  await emptyField(page, '#f-workspaceId')
  t.equal(await page.$eval('#f-workspaceId', (e) => (e as unknown as { value: string }).value), '', 'the workspace field is empty')
  t.equal((await clickAnswered(page, 'button[type=submit]', 'POST', '/v1/session')).status(), 200)
  await page.waitForSelector('h1#page-title')
  const cookie = (await page.cookies()).find((k) => k.name === 'svc_session')!
  t.ok(cookie.httpOnly, 'HttpOnly')
  t.equal(cookie.sameSite, 'Strict')
  t.equal(await page.evaluate("document.cookie.includes('svc_session')"), false, 'script in the page cannot read it')
})

t.test('the screens table at 10,000 screens: only the rows in view are rendered; filters; live presence within 5 s', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const { presence } = servicesOf(c.running.app)
  const store = (await c.call('POST', '/v1/nodes', { name: 'Store 7', kind: 'location' })).body.data.id as string
  const device = await c.pair('Aaa front door') // sorts first by id: paired before the bulk rows
  const at = '2026-06-01T12:00:00.000Z'
  const k = servicesOf(c.running.app).db.kysely
  for (let i = 0; i < 10_000; i += 500)
    await k
      .insertInto('screens')
      .values(
        Array.from({ length: 500 }, (_, j) =>
          screenRow(`scr_zz${String(i + j).padStart(6, '0')}`, c.workspaceId, at, { name: `Screen ${i + j}`, node_id: (i + j) % 100 === 0 ? store : null }),
        ),
      )
      .execute()
  const { page } = await launch(t)
  await acceptInvite(page, await invite(c, 'ops@example.com', 'admin'))
  await page.goto(`${c.base}/console/screens`)
  await textShown(page, '10001 screens')
  const rendered = await page.$$eval('tbody tr:not(.spacer)', (rs) => rs.length)
  t.ok(rendered > 10 && rendered < 80, `${rendered} rows in the document for 10,001 screens`)
  t.same(await page.$$eval('thead th', (hs) => hs.map((h) => h.textContent)), [
    '',
    'Name',
    'Status',
    'Assigned',
    'Now playing',
    'Location',
    'Last seen',
    'Agent version',
    'Drift',
    'Last screenshot',
    'Tags',
  ])
  await noSerious(t, page, 'screens page')
  await docShot(page, 'screens')

  // Scrolled to the end, the last screen is shown (the pages after the first load as it scrolls).
  const started = Date.now()
  for (const guardEnd = Date.now() + HANG_GUARD_MS; Date.now() < guardEnd; ) {
    await page.$eval('.scroller', (el) => el.scrollTo(0, el.scrollHeight))
    if (await page.evaluate("document.body.innerText.includes('Screen 9999')")) break
    await new Promise((r) => setTimeout(r, 50))
  }
  t.ok(await page.evaluate("document.body.innerText.includes('Screen 9999')"), `the last screen shown after scrolling (${Date.now() - started} ms)`)
  t.ok((await page.$$eval('tbody tr:not(.spacer)', (rs) => rs.length)) < 80, 'still only the rows in view')

  // Filters go to the API.
  await page.goto(`${c.base}/console/screens?nodeId=${store}`)
  await textShown(page, '100 screens')
  await page.goto(`${c.base}/console/screens`)
  await textShown(page, '10001 screens')
  await page.type('input[name=q]', 'aaa front')
  await textShown(page, '1 screen')

  // A real device comes online, then drops: the table follows without reloading.
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, device)
  await dev.client.publishAsync(topics.status(device.screenId), JSON.stringify({ status: 'online', at }), { qos: 1, retain: true })
  await page.waitForFunction("document.querySelector('tbody tr:not(.spacer) .badge')?.textContent === 'Online'")
  dev.client.stream.destroy()
  t.ok(await droppedAtBroker(c, device.screenId))
  await presence.idle()
  c.clock.advance(presence.offlineAfterMs)
  await presence.sweep()
  await page.waitForFunction("document.querySelector('tbody tr:not(.spacer) .badge')?.textContent === 'Offline'", { timeout: HANG_GUARD_MS })
  t.pass('offline shown without reloading once the API knew it')

  // The screen's own page.
  // Clicked in the page: live updates re-render the row, so a handle taken first can be detached
  // by the click, and while the table re-renders the row may have no link yet. The poll clicks
  // the row's link whenever there is one, until the screen's page is open.
  await page.waitForFunction(
    "location.pathname.startsWith('/console/screens/') || void document.querySelector('tbody tr:not(.spacer) a[href^=\"/console/screens/\"]')?.click()",
  )
  await page.waitForSelector('#h-timeline').catch(async (err: Error) => {
    throw new Error(`${err.message}, at ${await page.evaluate('location.pathname')}: ${(await page.$eval('main', (m) => m.textContent ?? '')).slice(0, 300)}`)
  })
  t.equal(await page.$eval('h1#page-title', (h) => h.textContent), 'Aaa front door')
  await textShown(page, 'What plays in the next 24 hours')
  // Assigning content from the screen's page: an unknown id is refused, saying why; a known one plays.
  await page.type('#f-contentId', 'pl_nope')
  await page.click('section[aria-labelledby=h-assign] button[type=submit]')
  await page.waitForSelector('section[aria-labelledby=h-assign] .error, section[aria-labelledby=h-assign] .field-error')
  c.content.add(c.workspaceId, { kind: 'playlist', id: 'pl_lobby' })
  await retype(page, '#f-contentId', 'pl_lobby')
  await page.click('section[aria-labelledby=h-assign] button[type=submit]')
  await textShown(page, 'Assigned playlist pl_lobby.')
  t.match((await c.call('GET', `/v1/screens/${device.screenId}`)).body.data, { contentKind: 'playlist', contentId: 'pl_lobby' }, 'assigned through the API')
  await noSerious(t, page, 'screen page')
  await docShot(page, 'screen')
})

t.test('a viewer is not offered what the role may not do; keyboard alone reaches everything; dark theme', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const screen = await c.pair('Lobby')
  const { page } = await launch(t, { dark: true })
  await acceptInvite(page, await invite(c, 'vera@example.com', 'viewer'))
  await page.goto(`${c.base}/console/screens/${screen.screenId}`)
  await page.waitForSelector('#h-timeline')
  t.equal(await page.$('#h-panel'), null, 'no panel controls for a viewer (needs screen.edit)')
  t.equal(await page.evaluate('getComputedStyle(document.body).backgroundColor'), 'rgb(13, 17, 23)', 'dark theme from the system setting')
  await noSerious(t, page, 'screen page, dark, viewer')

  // Keyboard: the first Tab reaches the skip link, Enter moves to the content.
  await page.goto(`${c.base}/console/`)
  await page.waitForSelector('h1#page-title')
  await page.keyboard.press('Tab')
  t.equal(await page.evaluate('document.activeElement?.textContent'), 'Skip to content')
  await page.keyboard.press('Enter')
  t.equal(await page.evaluate('document.activeElement?.id'), 'main', 'focus moves to the content')
  // Every link and button of the frame is reachable by Tab, in order, and shows its focus.
  let reachedScreens = false
  for (let i = 0; i < 30 && !reachedScreens; i++) {
    await page.keyboard.press('Tab')
    reachedScreens = (await page.evaluate('document.activeElement?.textContent')) === 'Screens'
  }
  t.ok(reachedScreens, 'Tab reaches the Screens link')
  await page.keyboard.press('Enter')
  await page.waitForFunction("document.querySelector('h1#page-title')?.textContent === 'Screens'")
  t.pass('Enter follows it')
})

t.test('pairing a screen from the console; a cross-site write with the session cookie changes nothing', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const { page } = await launch(t)
  await acceptInvite(page, await invite(c, 'pat@example.com', 'admin'))

  // A player asks for a code; the operator types it in the console.
  const reg = (await c.call('POST', '/v1/devices/register', { model: 'QM55B' }, null)).body.data
  await page.goto(`${c.base}/console/screens`)
  await page.waitForSelector('.page-head button')
  await page.click('.page-head button')
  await page.waitForSelector('#f-code')
  await page.type('#f-code', 'nope00')
  await page.type('#f-name', 'Window')
  await page.click('form.panel button[type=submit]')
  await page.waitForSelector('form.panel .error, form.panel .field-error')
  t.match(await page.$eval('form.panel', (f) => f.textContent), /code/i, 'a wrong code is refused, saying so')
  await noSerious(t, page, 'pairing form with an error')
  await retype(page, '#f-code', reg.pairingCode)
  await page.click('form.panel button[type=submit]')
  await page.waitForSelector('#h-timeline')
  t.equal(await page.$eval('h1#page-title', (h) => h.textContent), 'Window', "the new screen's page opens")
  t.equal((await c.call('GET', '/v1/screens')).body.data.length, 1, 'paired')

  // Another origin (a different port) tries to write with the browser's session cookie.
  const other = (await import('node:http')).createServer((_req, res) => {
    res.setHeader('content-type', 'text/html')
    res.end(
      `<!doctype html><title>evil</title><form id=f method=post action="${c.base}/v1/nodes" enctype="text/plain"><input name='{"name":"Evil","x":"' value='"}'></form>`,
    )
  })
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r))
  t.teardown(() => other.close())
  const evil = `http://127.0.0.1:${(other.address() as { port: number }).port}`
  const before = (await c.call('GET', '/v1/nodes')).body.data.length
  await page.goto(evil)
  const answered = await page.evaluate(
    `fetch(${JSON.stringify(`${c.base}/v1/nodes`)}, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: '{"name":"Evil"}' }).then(() => 'sent', (e) => String(e))`,
  )
  t.equal(answered, 'sent', 'the request went out (an opaque answer)')
  await Promise.all([page.waitForNavigation().catch(() => {}), page.evaluate(`document.getElementById('f').submit()`)])
  t.equal((await c.call('GET', '/v1/nodes')).body.data.length, before, 'no location was made by the other origin')
})
