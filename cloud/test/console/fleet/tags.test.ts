// Tags on the screens page, in a real Chromium against a real cloud (axe-core on each view):
// the Tags column; one screen's tags edited in place (a refused tag named under the field);
// three chosen screens tagged and untagged in one request. (The filters: filters.test.ts.)
import t from 'tap'
import type { HTTPRequest, Page } from 'puppeteer-core'
import { clickButton, docShot, missingChromium, noSerious, signedIn, startConsoleCloud, textShown, type ConsoleCloud, retype } from '../console.js'
import { taggedScreens } from '../fleet.js'

const skip = missingChromium(t) ?? false

async function tagsOf(c: ConsoleCloud, id: string): Promise<string[]> {
  return (await c.call('GET', `/v1/screens/${id}`)).body.data.tags
}

/** The Tags cell of each row in view, by screen name. */
async function tagCells(page: Page): Promise<Record<string, string>> {
  return (await page.evaluate(`Object.fromEntries([...document.querySelectorAll('.scroller tbody tr:not(.spacer)')].map((r) => {
    const cells = [...r.querySelectorAll('td')]
    const name = r.querySelector('td a')?.textContent
    return [name, [...cells[cells.length - 1].querySelectorAll('.badge.tag')].map((b) => b.textContent).join(' ')]
  }))`)) as Record<string, string>
}

t.test('screens page: the Tags column, one screen tagged in place, three tagged and untagged in one step', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const ids = await taggedScreens(c, { Atrium: ['floor:1'], Bar: ['floor:1', 'old'], Cafe: ['old'], Desk: [] })
  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  await page.goto(`${c.base}/console/screens`)
  await textShown(page, '4 screens')
  await page.waitForFunction("document.querySelectorAll('.scroller tbody .badge.tag').length === 4")
  t.same(await tagCells(page), { Atrium: 'floor:1', Bar: 'floor:1 old', Cafe: 'old', Desk: '' }, 'the Tags column shows what the API holds')

  // One screen: tags added and removed in place; a refused one named under the field.
  await page.click('button[aria-label="Edit tags of Desk"]')
  const field = `#tags-${ids.Desk}`
  await page.waitForSelector(field)
  await page.type(field, 'Lobby, bad!tag')
  await page.keyboard.press('Enter')
  await page.waitForSelector(`${field}-error`)
  t.match(await page.$eval(`${field}-error`, (e) => e.textContent), /tags\W1/, "the API's refusal under the field, naming the tag")
  t.same(await tagsOf(c, ids.Desk!), [], 'nothing written')
  await retype(page, field, 'Lobby')
  await page.keyboard.press('Enter')
  await textShown(page, 'Added Lobby.')
  t.same(await tagsOf(c, ids.Desk!), ['lobby'], 'the API holds it, in lower case')
  await page.waitForFunction(
    "[...document.querySelectorAll('.scroller tbody tr')].some((r) => r.textContent.includes('Desk') && r.textContent.includes('lobby'))",
  )
  t.pass("the row's Tags column follows")
  await noSerious(t, page, 'screens page editing one screen’s tags')
  await clickButton(page, 'Close')

  // Three chosen: one request adds a tag and removes another.
  await page.click('input[aria-label="Choose Atrium"]')
  await page.click('input[aria-label="Choose Bar"]')
  await page.click('input[aria-label="Choose Cafe"]')
  await textShown(page, 'Tag 3 chosen screens')
  await clickButton(page, 'Change the tags of 3 screens')
  await textShown(page, 'Send the tags to add or to remove.')
  t.pass('nothing to change: the API says so')
  const bulkRequests: string[] = []
  const onRequest = (r: HTTPRequest) => {
    if (r.url().endsWith('/v1/screens/bulk-tag')) bulkRequests.push(r.postData() ?? '')
  }
  page.on('request', onRequest)
  await page.type('#f-bulk-add', 'format:kiosk')
  await page.type('#f-bulk-remove', 'old')
  await clickButton(page, 'Change the tags of 3 screens')
  await textShown(page, 'Changed the tags of 3 of 3 screens.')
  page.off('request', onRequest)
  t.equal(bulkRequests.length, 1, 'one request')
  t.same(JSON.parse(bulkRequests[0]!), { screenIds: [ids.Atrium, ids.Bar, ids.Cafe], add: ['format:kiosk'], remove: ['old'] })
  t.same(
    [await tagsOf(c, ids.Atrium!), await tagsOf(c, ids.Bar!), await tagsOf(c, ids.Cafe!), await tagsOf(c, ids.Desk!)],
    [['floor:1', 'format:kiosk'], ['floor:1', 'format:kiosk'], ['format:kiosk'], ['lobby']],
    'the API: added to the three, removed where it was, the fourth untouched',
  )
  await page.waitForFunction("[...document.querySelectorAll('.scroller tbody .badge.tag')].filter((b) => b.textContent === 'format:kiosk').length === 3")
  t.same(await tagCells(page), { Atrium: 'floor:1 format:kiosk', Bar: 'floor:1 format:kiosk', Cafe: 'format:kiosk', Desk: 'lobby' }, 'the table shows it')
  await noSerious(t, page, 'screens page with the bulk tag form')
  await page.$eval('.bulk-panels', (e) => e.scrollIntoView())
  await docShot(page, 'screens-tags')
  await clickButton(page, 'Clear the selection')
})
