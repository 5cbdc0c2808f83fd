// The screens page's filters by tag and by group, in a real Chromium against a real cloud
// (axe-core, light and dark): each narrows the table, together too, kept in the address
// across a reload; a screen's page edits its tags; a viewer gets the filters and no editing.
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { missingChromium, noSerious, signedIn, startConsoleCloud, textShown } from '../console.js'
import { taggedScreens } from '../fleet.js'

const skip = missingChromium(t) ?? false

const rowNames = (page: Page) =>
  page.evaluate("[...document.querySelectorAll('.scroller tbody tr:not(.spacer) td a')].map((a) => a.textContent).sort()") as Promise<string[]>

t.test("screens filtered by tag and by group, kept in the address; tags edited on a screen's page; a viewer", { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  const ids = await taggedScreens(c, {
    Atrium: ['floor:1', 'format:kiosk'],
    Bar: ['floor:1', 'format:kiosk'],
    Cafe: ['format:kiosk'],
    Desk: ['lobby'],
  })
  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  await page.goto(`${c.base}/console/screens`)
  await textShown(page, '4 screens')

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
  t.same((await c.call('GET', `/v1/screens/${ids.Atrium}`)).body.data.tags, ['format:kiosk'], "removed on the screen's page")
  await noSerious(t, page, "a screen's page with its tags")

  // Dark, and a viewer: the column and filters, no editing.
  const viewer = await signedIn(t, c, 'vera@example.com', 'viewer', true)
  await viewer.goto(`${c.base}/console/screens?tag=format:kiosk`)
  await textShown(viewer, '3 screens')
  t.equal(await viewer.$('button[aria-label^="Edit tags of"]'), null, 'a viewer has no tag editing')
  await noSerious(t, viewer, 'screens page filtered by tag, dark, viewer')
})
