// Tags on the screens page, in a real Chromium against a real cloud (axe-core on each view,
// light and dark): the Tags column; one screen's tags edited in place (a refused tag named
// under the field); three chosen screens tagged and untagged in one request; the tag and
// group filters narrowing the table and kept in the address; a screen's page editing its
// tags; a viewer offered no editing.
import t from 'tap'
import type { HTTPRequest, Page } from 'puppeteer-core'
import { docShot, missingChromium, noSerious, signedIn, startConsoleCloud, textShown, type ConsoleCloud } from './console.js'
import { clickButton, taggedScreens } from './fleet.js'

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

const rowNames = (page: Page) =>
  page.evaluate("[...document.querySelectorAll('.scroller tbody tr:not(.spacer) td a')].map((a) => a.textContent).sort()") as Promise<string[]>

t.test('screens page: the Tags column, one screen tagged, three in one step, filters by tag and group kept in the address', { skip }, async (t) => {
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
  await page.$eval(field, (e) => {
    ;(e as unknown as { value: string }).value = ''
  })
  await page.type(field, 'Lobby')
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
  await docShot(page, 'screens-tags')
  await clickButton(page, 'Clear the selection')

  // Filters: a tag, then a group; the address keeps them, a reload shows the same.
  await page.waitForFunction("[...document.querySelectorAll('select[name=tag] option')].some((o) => o.value === 'floor:1')")
  await page.select('select[name=tag]', 'floor:1')
  await textShown(page, '2 screens')
  t.same(await rowNames(page), ['Atrium', 'Bar'], 'tag floor:1')
  t.equal(new URL(page.url()).searchParams.get('tag'), 'floor:1', 'in the address')
  await page.goto(page.url())
  await textShown(page, '2 screens')
  t.same(await rowNames(page), ['Atrium', 'Bar'], 'kept across a reload')
  t.equal(await page.$eval('select[name=tag]', (s) => (s as unknown as { value: string }).value), 'floor:1', 'the filter shows it')

  const group = (await c.call('POST', '/v1/groups', { name: 'Back of house', kind: 'static', screenIds: [ids.Cafe, ids.Desk] })).body.data.id as string
  await page.goto(`${c.base}/console/screens`)
  await textShown(page, '4 screens')
  await page.waitForFunction(`[...document.querySelectorAll('select[name=group] option')].some((o) => o.value === '${group}')`)
  await page.select('select[name=group]', group)
  await textShown(page, '2 screens')
  t.same(await rowNames(page), ['Cafe', 'Desk'], "the group's members")
  await page.select('select[name=tag]', 'format:kiosk')
  await textShown(page, '1 screen')
  t.same(await rowNames(page), ['Cafe'], 'tag and group together')
  const q = new URL(page.url()).searchParams
  t.same([q.get('group'), q.get('tag')], [group, 'format:kiosk'], 'both in the address')
  await noSerious(t, page, 'screens page filtered by tag and group')

  // A screen's page: its tags, edited there too.
  await page.goto(`${c.base}/console/screens/${ids.Atrium}`)
  await page.waitForSelector('#h-tags')
  await page.click('button[aria-label="Remove tag floor:1"]')
  await textShown(page, 'Removed floor:1.')
  t.same(await tagsOf(c, ids.Atrium!), ['format:kiosk'], "removed on the screen's page")
  await noSerious(t, page, "a screen's page with its tags")

  // Dark, and a viewer: the column and filters, no editing.
  const viewer = await signedIn(t, c, 'vera@example.com', 'viewer', true)
  await viewer.goto(`${c.base}/console/screens?tag=format:kiosk`)
  await textShown(viewer, '3 screens')
  t.equal(await viewer.$('button[aria-label^="Edit tags of"]'), null, 'a viewer has no tag editing')
  await noSerious(t, viewer, 'screens page filtered by tag, dark, viewer')
})
