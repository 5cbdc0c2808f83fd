// Settings in a real Chromium against a real cloud (issue 48, item 7): a user who signed in
// shows when they joined and last signed in (not "invited"); counts read "1 user", "1 API
// key"; an invite says no mail left when no mail server is set up; the Workspace section
// says its facts in words, with no billing section where the service does not bill.
import t from 'tap'
import { clickButton, missingChromium, noSerious, signedIn, startConsoleCloud, textShown } from '../console.js'
import { GUARD_MS } from '../sso.js'

const skip = missingChromium(t) ?? false

t.test('users joined and last signed in, plurals, the invite mail state, the workspace in words', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  await page.goto(`${c.base}/console/settings`)
  await textShown(page, 'Users and roles')
  await page.waitForSelector('#users ~ table caption', { timeout: GUARD_MS })
  t.equal(await page.$eval('#users ~ table caption', (e) => e.textContent), '1 user', 'one user, not "1 users"')
  await page.waitForSelector('#keys ~ table caption', { timeout: GUARD_MS })
  t.equal(await page.$eval('#keys ~ table caption', (e) => e.textContent), '1 API key', 'one API key')
  const row = await page.$eval('#users ~ table tbody tr', (r) => (r as unknown as { innerText: string }).innerText)
  t.notMatch(row, /invited/, 'a user who signed in is not "invited"')
  t.match(row, /ago|now/, 'joined and last signed in, as times')
  const users = (await c.call('GET', '/v1/users')).body.data as { email: string; joinedAt: string | null; lastSignInAt: string | null }[]
  t.ok(users[0]?.joinedAt, 'the API gives joinedAt')
  t.ok(users[0]?.lastSignInAt, 'and lastSignInAt')

  await page.type('#f-invite-email', 'bob@example.com')
  await clickButton(page, 'Invite')
  await page.waitForSelector('.secret', { timeout: GUARD_MS })
  const note = await page.$eval('.secret', (e) => e.textContent ?? '')
  t.match(note, /No email was sent: this service has no mail server set up/, 'the invite says no mail left')
  t.notMatch(note, /also sent by email/)
  await page.waitForFunction("document.querySelector('#users ~ table caption')?.textContent === '2 users'", { timeout: GUARD_MS })
  const bob = await page.$$eval(
    '#users ~ table tbody tr',
    (rs) => rs.map((r) => (r as unknown as { innerText: string }).innerText).find((x) => x.includes('bob@')) ?? '',
  )
  t.match(bob, /invited/, 'an invited user who has not signed in is "invited"')

  const workspace = await page.$eval('#workspace', (e) => (e.parentElement as unknown as { innerText: string }).innerText)
  t.match(workspace, /Status\s+active/)
  t.match(workspace, /Region\s+United States/)
  t.match(workspace, /0 screens in use/)
  t.notMatch(workspace, /white label|survey|Billing/i, 'no raw billing fields and no billing section where the service does not bill')
  await noSerious(t, page, 'settings (light)')
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }])
  await noSerious(t, page, 'settings (dark)')
})
