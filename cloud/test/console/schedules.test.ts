// The schedules page in a real Chromium against a real cloud: a schedule created with a
// weekday rule and seen in the week view (blocks in the day columns and the rules table that
// screen readers read); the API's 422 next to the field it names; an edit; a viewer offered
// no create or edit; Tab reaching New schedule; no serious or critical axe-core violation.
// The rule's content is picked with the content picker (more than a page of playlists, the
// one wanted found by a search); a schedule deleted after a confirmation (a 409 while used).
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { clickButton, docShot, missingChromium, textShown, signedIn, noSerious, fileCloud, retype } from './console.js'

const skip = missingChromium(t) ?? false
/** One cloud for this file's tests. */
const cloud = fileCloud()

const ruleRows = (page: Page) =>
  page.$$eval('.week-table tbody tr', (rs) => rs.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent))) as Promise<string[][]>

t.test('create a schedule with a weekday rule and see it in the week view; a 422 next to its field; edit', { skip }, async (t) => {
  const c = await cloud(t)
  const playlist = (await c.call('POST', '/v1/playlists', { name: 'Lobby loop' })).body.data.id as string
  // More playlists than one page of the content picker (25 a page).
  for (let i = 0; i < 30; i++) await c.call('POST', '/v1/playlists', { name: `Filler ${String(i).padStart(2, '0')}` })
  const page = await signedIn(t, c, 'ed@example.com', 'editor')
  await page.goto(`${c.base}/console/schedules`)
  await textShown(page, '0 schedules')
  await noSerious(t, page, 'schedules page, empty')

  await clickButton(page, 'New schedule')
  await page.waitForSelector('#f-name')
  await page.type('#f-name', 'Weekdays')
  await page.type('#f-timezone', 'Mars/Olympus')
  await clickButton(page, 'Add rule')
  await page.waitForSelector('#rule-content-0')
  // The content picker: a page of 25, Load more for the rest, and a search by name.
  await page.click('#rule-content-0')
  await page.waitForSelector('#rule-content-0-list [role=option]')
  t.equal(await page.evaluate("document.querySelectorAll('#rule-content-0-list [role=option]').length"), 25, 'the first page of 25')
  t.equal(await page.$eval('#rule-content-0', (e) => e.getAttribute('aria-expanded')), 'true')
  await noSerious(t, page, 'schedule form with the content picker open')
  await clickButton(page, 'Load more')
  await page.waitForFunction("document.querySelectorAll('#rule-content-0-list [role=option]').length === 31")
  t.pass('Load more reads the next page: all 31')
  await page.focus('#rule-content-0')
  await page.keyboard.type('lobby')
  await page.waitForFunction(
    "document.querySelectorAll('#rule-content-0-list [role=option]').length === 1 && document.querySelector('#rule-content-0-list [role=option]').textContent.includes('Lobby loop')",
  )
  t.pass('the search by name goes to the API and finds the one on the last page')
  await page.keyboard.press('ArrowDown')
  t.equal(await page.$eval('#rule-content-0', (e) => e.getAttribute('aria-activedescendant')), 'rule-content-0-opt-0', 'Down arrow moves to the match')
  await page.keyboard.press('Enter')
  t.equal(await page.$eval('#rule-content-0', (e) => (e as unknown as { value: string }).value), 'Lobby loop', 'Enter picks it')
  t.equal(await page.$('#rule-content-0-list'), null, 'the list closes')
  t.match(await page.$eval('#rule-content-0-hint', (e) => e.textContent), playlist, 'the chosen id is shown')
  // Monday to Friday (the day boxes run Monday first).
  await page.evaluate("[...document.querySelectorAll('.days input')].slice(0, 5).forEach((b) => b.click())")
  await clickButton(page, 'Create schedule')
  await page.waitForSelector('#f-timezone-error')
  t.match(await page.$eval('#f-timezone-error', (e) => e.textContent), /timezone/, "the API's 422 next to the time zone")
  t.match(await page.$eval('#f-timezone', (e) => e.getAttribute('aria-describedby')), /f-timezone-error/)
  await noSerious(t, page, 'schedule form with an error')
  await retype(page, '#f-timezone', 'Europe/Paris')
  await docShot(page, 'schedule-form')
  await clickButton(page, 'Create schedule')
  await textShown(page, '1 schedule')
  await textShown(page, 'Week of Weekdays')

  const got = (await c.call('GET', '/v1/schedules')).body.data as { name: string; timezone: string; rules: Record<string, unknown>[] }[]
  t.equal(got[0]?.timezone, 'Europe/Paris')
  t.match(got[0]?.rules, [{ content: { kind: 'playlist', id: playlist }, start: '09:00', end: '17:00', priority: 1 }], 'the rule as entered')
  t.same(got[0]?.rules[0]?.days, [1, 2, 3, 4, 5], 'Monday to Friday')

  // The week view: a block in each weekday column, none at the weekend; the same as a table.
  const blocks = (await page.$$eval('.week-day', (ds) => ds.map((d) => d.querySelectorAll('.week-block').length))) as number[]
  t.same(blocks, [1, 1, 1, 1, 1, 0, 0], 'blocks Monday to Friday')
  t.equal(await page.$eval('.week', (e) => e.getAttribute('aria-hidden')), 'true', 'the visual grid is left to the table for screen readers')
  // A rule names its content once the content's names have loaded (its id until then).
  await textShown(page, 'Lobby loop (playlist)')
  t.same(await ruleRows(page), [['Lobby loop (playlist)', 'Mon, Tue, Wed, Thu, Fri', '09:00', '17:00', 'Always', '1', 'Yes']], 'the rules table')
  const top = await page.$eval('.week-block', (e) => (e as unknown as { style: { top: string; height: string } }).style.top)
  t.equal(top, '37.5%', 'the block starts at 09:00 (3/8 down the day)')
  await noSerious(t, page, 'schedules page with the week view')
  await docShot(page, 'schedules')

  // Edit: the rule ends at 18:00 now.
  await page.click('button[aria-label="Edit Weekdays"]')
  await page.waitForSelector('#rule-end-0')
  t.equal(await page.$eval('#f-name', (e) => (e as unknown as { value: string }).value), 'Weekdays')
  await page.$eval('#rule-end-0', (e) => {
    const i = e as unknown as { value: string; dispatchEvent(ev: unknown): void }
    i.value = '18:00'
    i.dispatchEvent(new (globalThis as unknown as { Event: new (n: string, o: unknown) => unknown }).Event('input', { bubbles: true }))
  })
  await clickButton(page, 'Save schedule')
  await page.waitForFunction("document.querySelector('.week-table tbody tr td:nth-child(4)')?.textContent === '18:00'")
  t.equal(((await c.call('GET', '/v1/schedules')).body.data[0].rules[0] as { end: string }).end, '18:00', 'saved')

  // Delete, asked twice: refused while a screen plays it (the API's 409 in words), then gone.
  const schedule = (await c.call('GET', '/v1/schedules')).body.data[0].id as string
  const screen = await c.pair('Lobby')
  c.content.add(c.workspaceId, { kind: 'schedule', id: schedule })
  t.equal((await c.call('POST', `/v1/screens/${screen.screenId}/assign`, { contentKind: 'schedule', contentId: schedule })).status, 200)
  await page.click('button[aria-label="Delete Weekdays"]')
  await page.waitForSelector('button[aria-label="Yes, Delete Weekdays"]')
  // The focus moves in an effect after the paint: wait for it.
  await page.waitForFunction('document.activeElement?.getAttribute("aria-label") === "Yes, Delete Weekdays"')
  t.pass('the confirmation has the focus')
  await page.keyboard.press('Enter')
  await page.waitForSelector('.page .error')
  t.match(await page.$eval('.page .error', (e) => e.textContent), /use|assign|screen/i, 'a schedule in use: refused, saying why')
  t.equal((await c.call('GET', '/v1/schedules')).body.data.length, 1, 'still there')
  t.equal((await c.call('POST', `/v1/screens/${screen.screenId}/assign`, { contentKind: null, contentId: null })).status, 200)
  await page.click('button[aria-label="Delete Weekdays"]')
  await page.click('button[aria-label="Yes, Delete Weekdays"]')
  await textShown(page, '0 schedules')
  await textShown(page, 'Weekdays deleted.')
  t.equal((await c.call('GET', '/v1/schedules')).body.data.length, 0, 'deleted through the API')
  await noSerious(t, page, 'schedules page after a delete')
})

t.test('a viewer sees schedules and their week without create or edit; Tab reaches New schedule', { skip }, async (t) => {
  const c = await cloud(t)
  const playlist = (await c.call('POST', '/v1/playlists', { name: 'Evening' })).body.data.id as string
  const made = await c.call('POST', '/v1/schedules', {
    name: 'Evenings',
    rules: [
      { id: 'r1', content: { kind: 'playlist', id: playlist }, priority: 1, start: '18:00', end: '22:00' },
      { id: 'r2', content: { kind: 'playlist', id: playlist }, priority: 2, days: [5], start: '22:00', end: '06:00' },
    ],
  })
  t.equal(made.status, 201)
  const viewer = await signedIn(t, c, 'vera@example.com', 'viewer', true)
  await viewer.goto(`${c.base}/console/schedules`)
  await textShown(viewer, 'Week of Evenings')
  await textShown(viewer, 'Evening (playlist)')
  t.same(await ruleRows(viewer), [
    ['Evening (playlist)', 'Every day', '18:00', '22:00', 'Always', '1', 'Yes'],
    ['Evening (playlist)', 'Fri', '22:00', '06:00 (next day)', 'Always', '2', 'Yes'],
  ])
  // Friday's overnight rule runs on into Saturday morning.
  const blocks = (await viewer.$$eval('.week-day', (ds) => ds.map((d) => d.querySelectorAll('.week-block').length))) as number[]
  t.same(blocks, [1, 1, 1, 1, 2, 2, 1], 'every evening, Friday night into Saturday morning')
  const saturday = (await viewer.$$eval('.week-day:nth-child(6) .week-block', (bs) =>
    bs.map((b) => (b as unknown as { style: { top: string; height: string } }).style.top),
  )) as string[]
  t.same(saturday.sort(), ['0%', '75%'], 'Saturday: 00:00 to 06:00 and the evening')
  t.equal(await viewer.evaluate("[...document.querySelectorAll('button')].some((b) => b.textContent === 'New schedule')"), false, 'no New schedule')
  t.equal(await viewer.$('button[aria-label^=Edit]'), null, 'no edit')
  t.equal(await viewer.$('button[aria-label^=Delete]'), null, 'no delete')
  await noSerious(t, viewer, 'schedules page, viewer, dark')

  const page = await signedIn(t, c, 'kim@example.com', 'editor')
  await page.goto(`${c.base}/console/schedules`)
  await textShown(page, 'Week of Evenings')
  await page.focus('#main')
  let reached = false
  for (let i = 0; i < 20 && !reached; i++) {
    await page.keyboard.press('Tab')
    reached = (await page.evaluate('document.activeElement?.textContent')) === 'New schedule'
  }
  t.ok(reached, 'Tab reaches New schedule')
  await page.keyboard.press('Enter')
  await page.waitForSelector('#f-name')
  t.pass('Enter opens the form')
})
