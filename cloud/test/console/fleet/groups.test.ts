// The Groups page, in a real Chromium against a real cloud (axe-core, light and dark): a
// dynamic group built in the rule builder whose live count and first members follow each edit
// (nothing stored until Save), a refused condition named next to it, saved, edited; a static
// group of a screen picked by name; deleted after a confirmation; a viewer sees the list only.
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { clickButton, docShot, missingChromium, noSerious, signedIn, startConsoleCloud, textShown, retype } from '../console.js'
import { taggedScreens } from '../fleet.js'

const skip = missingChromium(t) ?? false

/** The ids of the rule builder's conditions, in the order shown. */
const conds = (page: Page) => page.evaluate("[...document.querySelectorAll('.rule-builder li.cond')].map((li) => li.dataset.cond)") as Promise<string[]>
const countShown = (page: Page, text: string) => page.waitForFunction(`document.querySelector('.preview-count')?.textContent === ${JSON.stringify(text)}`)

t.test(
  'the rule builder: the live count and first members follow each edit; a refused condition named beside it; saved, edited, deleted',
  { skip },
  async (t) => {
    const c = await startConsoleCloud(t)
    const ids = await taggedScreens(c, {
      'Lobby north': ['format:kiosk', 'floor:1'],
      'Lobby south': ['format:kiosk', 'floor:2'],
      Cafe: ['floor:2'],
      Dock: [],
    })
    const page = await signedIn(t, c, 'ada@example.com', 'admin')
    const nav = await page.$$eval('nav[aria-label=Main] a', (as) => as.map((x) => x.textContent))
    t.ok(nav.includes('Groups'), 'Groups in the navigation')
    await page.goto(`${c.base}/console/groups`)
    await textShown(page, 'No groups yet.')
    const previews: string[] = []
    page.on('request', (r) => {
      if (r.url().endsWith('/v1/groups/preview')) previews.push(r.postData() ?? '')
    })
    await clickButton(page, 'New group')
    await page.waitForSelector('#f-group-name')
    await page.type('#f-group-name', 'Kiosks')
    await countShown(page, 'Fill in each condition to see which screens it matches.')
    const [first] = await conds(page)
    await page.type(`#cond-${first}-value`, 'format:kiosk')
    await countShown(page, '2 screens match now.')
    t.same(await page.$$eval('.preview-list li', (ls) => ls.map((l) => l.textContent).sort()), ['Lobby north', 'Lobby south'], 'the first members')

    // Edited: the count follows.
    await retype(page, `#cond-${first}-value`, 'floor:2')
    await countShown(page, '2 screens match now.')
    await page.waitForFunction("[...document.querySelectorAll('.preview-list li')].map((l) => l.textContent).sort().join() === 'Cafe,Lobby south'")
    t.pass('another tag: other members')
    await clickButton(page, 'Add a condition')
    let all = await conds(page)
    await page.select(`#cond-${all[1]}-kind`, 'name')
    await page.type(`#cond-${all[1]}-value`, 'lobby*')
    await countShown(page, '1 screen matches now.')
    t.same(await page.$$eval('.preview-list li', (ls) => ls.map((l) => l.textContent)), ['Lobby south'], 'all of: floor:2 and a name like lobby*')
    await page.select('#rule-match', 'any')
    await countShown(page, '3 screens match now.')
    t.pass('any of: three')
    await page.select('#rule-match', 'all')
    await countShown(page, '1 screen matches now.')

    // A not around a nested any.
    await clickButton(page, 'Add a condition')
    all = await conds(page)
    await page.select(`#cond-${all[2]}-kind`, 'not')
    all = await conds(page)
    const inner = all[3]!
    await page.type(`#cond-${inner}-value`, 'floor:2')
    await countShown(page, '0 screens match now.')
    await page.select(`#cond-${inner}-kind`, 'tagPrefix')
    await retype(page, `#cond-${inner}-value`, 'format')
    await countShown(page, '0 screens match now.')
    await retype(page, `#cond-${inner}-value`, 'nothing:')
    await countShown(page, '1 screen matches now.')
    t.pass('not (tag prefix): the count follows')

    // A version that is not one: the API's words next to that condition, and no count.
    await page.select(`#cond-${all[2]}-kind`, 'agentVersion')
    all = await conds(page)
    await page.type(`#cond-${all[2]}-value`, '1.x')
    await page.waitForSelector(`li.cond.invalid[data-cond="${all[2]}"] .field-error`)
    t.match(
      await page.$eval(`li.cond[data-cond="${all[2]}"] .field-error`, (e) => e.textContent),
      /rule\.all\[2\]\.agentVersion\.gte: a version "x\.y\.z"/,
      'the refusal next to the condition it names',
    )
    await countShown(page, 'The rule cannot be used yet: see the condition marked.')
    await noSerious(t, page, 'the rule builder with a refused condition')
    await retype(page, `#cond-${all[2]}-value`, '9.0.0')
    await page.select(`#cond-${all[2]}-op`, 'lt')
    await countShown(page, '0 screens match now.')
    t.pass('screens without an agent version never match a version condition')
    await clickButton(page, 'Remove condition 3')
    await countShown(page, '1 screen matches now.')
    t.ok(previews.length >= 5, `the preview was asked as the rule changed (${previews.length} times)`)
    t.same((await c.call('GET', '/v1/groups')).body.data, [], 'nothing stored while editing')
    await noSerious(t, page, 'the rule builder with its live count')
    await docShot(page, 'group-rule')

    await clickButton(page, 'Save group')
    await page.waitForSelector('tr[data-group]')
    const saved = (await c.call('GET', '/v1/groups')).body.data[0]
    t.match(saved, { name: 'Kiosks', kind: 'dynamic', memberCount: 1, rule: { all: [{ tag: 'floor:2' }, { name: 'lobby*' }] } }, 'saved as built')
    t.equal(await page.$eval(`tr[data-group="${saved.id}"] .member-count`, (e) => e.textContent), '1', 'the list shows its members')

    // Edited: the rule comes back into the builder; a save changes it.
    await clickButton(page, 'Edit Kiosks')
    await page.waitForSelector('#h-group-form')
    all = await conds(page)
    t.equal(all.length, 2, 'both conditions back in the builder')
    await countShown(page, '1 screen matches now.')
    await clickButton(page, 'Remove condition 2')
    await countShown(page, '2 screens match now.')
    await clickButton(page, 'Save group')
    await page.waitForFunction(`document.querySelector('tr[data-group="${saved.id}"] .member-count')?.textContent === '2'`)
    t.same((await c.call('GET', `/v1/groups/${saved.id}`)).body.data.rule, { all: [{ tag: 'floor:2' }] }, 'edited')

    // A name the API refuses: next to the name field.
    await clickButton(page, 'New group')
    await page.click('input[name=group-kind][value=static]')
    await page.type('#f-group-screen-search', 'Dock')
    await page.waitForSelector(`input[type=checkbox][value="${ids.Dock}"]`)
    await page.click(`input[type=checkbox][value="${ids.Dock}"]`)
    await clickButton(page, 'Save group')
    await page.waitForSelector('#f-group-name-error, form.group-form .error')
    t.match(await page.$eval('form.group-form', (f) => f.textContent), /name/i, 'an empty name: refused, saying so')
    await page.type('#f-group-name', 'Dock only')
    await clickButton(page, 'Save group')
    await page.waitForFunction("[...document.querySelectorAll('tr[data-group]')].length === 2")
    const dock = (await c.call('GET', '/v1/groups')).body.data.find((g: { name: string }) => g.name === 'Dock only')
    t.match(dock, { kind: 'static', screenIds: [ids.Dock], memberCount: 1 }, 'a static group of the screen picked')
    await noSerious(t, page, 'the groups list')
    await docShot(page, 'groups')

    // Deleted after a confirmation.
    await clickButton(page, 'Delete Dock only')
    await clickButton(page, 'Yes, Delete Dock only')
    await page.waitForFunction("[...document.querySelectorAll('tr[data-group]')].length === 1")
    t.equal((await c.call('GET', `/v1/groups/${dock.id}`)).status, 404, 'gone')

    // Dark theme: the builder with a nested condition.
    const dark = await signedIn(t, c, 'dan@example.com', 'admin', true)
    await dark.goto(`${c.base}/console/groups`)
    await dark.waitForSelector('tr[data-group]')
    await clickButton(dark, 'Edit Kiosks')
    await dark.waitForSelector('#h-group-form')
    await clickButton(dark, 'Add a condition')
    const d = await conds(dark)
    await dark.select(`#cond-${d[1]}-kind`, 'any')
    await dark.waitForSelector('.conds .conds li.cond')
    await noSerious(t, dark, 'the rule builder, dark, nested')

    // A viewer: the list, no controls.
    const viewer = await signedIn(t, c, 'vic@example.com', 'viewer')
    await viewer.goto(`${c.base}/console/groups`)
    await viewer.waitForSelector('tr[data-group]')
    t.notOk(
      await viewer.evaluate("[...document.querySelectorAll('button')].some((b) => ['New group', 'Edit', 'Delete'].includes(b.textContent.trim()))"),
      'no controls for a viewer',
    )
    await noSerious(t, viewer, 'groups, viewer')
  },
)
