// The screens page and a screen's page in a real Chromium against a real cloud and real
// devices (MQTT clients playing the player):
// - bulk assignment: screens chosen by their checkboxes (one by keyboard, all in view, then
//   three of five), content picked with the content picker from more media than one page of
//   the API (Load more follows the cursor; the one wanted found by a search), assigned in one
//   request; the API's 422 shown; the rows and the API show it; a viewer has no checkboxes;
// - a panel command clicked on a screen's page reaches the device as a serial job on its jobs
//   topic, the device answers a job result, and the page shows the outcome;
// - the screenshot button queues a screenshot job that the device receives and answers by
//   uploading a PNG with its credential to the job's uploadUrl; the page shows the image;
// - the screens page as a grid of the screens' last screenshots, switched to by keyboard.
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { parseJob, topics, type Job } from '@svc/shared/mqtt/index'
import { servicesOf } from '../../../src/app.js'
import { form, png } from '../../content/fixtures.js'
import { connectDevice } from '../../devicelink/link.js'
import { clickButton, docShot, missingChromium, noSerious, pageHolds, signedIn, textShown, type ConsoleCloud, fileCloud, retype } from '../console.js'
import { screenRow } from '../../fixtures/screenRows.js'
import { announce } from '../../../src/platform/db/changes.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const skip = missingChromium(t) ?? false
/** One cloud for this file's tests. */
const cloud = fileCloud()

async function uploadMedia(c: ConsoleCloud, name: string): Promise<string> {
  const f = form({ name, file: { filename: `${name}.png`, data: png(8, 8) } })
  const res = await fetch(`${c.base}/v1/media/upload`, { method: 'POST', headers: { authorization: `Bearer ${c.apiKey}`, ...f.headers }, body: f.payload })
  if (res.status !== 201) throw new Error(`upload ${res.status} ${await res.text()}`)
  return ((await res.json()) as { data: { id: string } }).data.id
}

const options = (page: Page, id: string) => page.evaluate(`document.querySelectorAll('#${id}-list [role=option]').length`) as Promise<number>

t.test('bulk assignment: three of five screens chosen, media picked by a search past the first page, assigned in one request', { skip }, async (t) => {
  const c = await cloud(t)
  // 30 files: more than one page of the picker (25), so the second comes through the API's cursor.
  const ids: string[] = []
  for (let i = 0; i < 30; i++) ids.push(await uploadMedia(c, `Poster ${String(i).padStart(2, '0')}`))
  await servicesOf(c.running.app).media.processPending()
  const wanted = ids[3]!
  // The test cloud's content library is the in-memory one: what may be assigned is added to it.
  c.content.add(c.workspaceId, { kind: 'media', id: wanted })
  const screens: string[] = []
  for (const name of ['Atrium', 'Bar', 'Cafe', 'Desk', 'Entrance']) screens.push((await c.pair(name)).screenId)

  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  await page.goto(`${c.base}/console/screens`)
  await textShown(page, '5 screens')
  t.equal(await page.$('#h-bulk'), null, 'no bulk form before a screen is chosen')

  // All in view, and none again.
  await page.click('input[aria-label="Choose every screen in view"]')
  await textShown(page, 'Assign content to 5 chosen screens')
  await page.click('input[aria-label="Choose every screen in view"]')
  await page.waitForFunction("!document.querySelector('#h-bulk')")
  t.pass('the header box chooses every screen in view, and none')

  // One by keyboard (Space on its box), two by click.
  await page.focus('input[aria-label="Choose Atrium"]')
  await page.keyboard.press('Space')
  await textShown(page, 'Assign content to 1 chosen screen')
  await page.click('input[aria-label="Choose Cafe"]')
  await page.click('input[aria-label="Choose Entrance"]')
  await textShown(page, 'Assign content to 3 chosen screens')

  // An unknown id: the API's 422 next to the content field. The id is typed in the same
  // frame as the kind changes (as a busy machine delivers the keys before the page paints):
  // the picker's reset for the new kind is done by then and must not empty the field later.
  await page.evaluate(`(async () => {
    const kind = document.querySelector('#f-bulk-kind')
    kind.value = 'media'
    kind.dispatchEvent(new Event('input', { bubbles: true }))
    kind.dispatchEvent(new Event('change', { bubbles: true }))
    await Promise.resolve()
    const field = document.querySelector('#bulk-content')
    field.value = 'med_nope'
    field.dispatchEvent(new Event('input', { bubbles: true }))
  })()`)
  // Effects run after the next frame, in a task of their own: two of each and they have run.
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(() => requestAnimationFrame(() => setTimeout(r)))))')
  t.equal(
    await page.$eval('#bulk-content', (e) => (e as unknown as { value: string }).value),
    'med_nope',
    'the id typed as the kind changed stays in the field',
  )
  await clickButton(page, 'Assign to 3 screens')
  await page.waitForSelector('#bulk-content-error, #h-bulk ~ .error, form.bulk .error')
  t.match(await page.$eval('form.bulk', (f) => f.textContent), /med_nope|contentId|not found|unknown/i, 'refused, saying why')
  await noSerious(t, page, 'screens page with the bulk form and an error')

  // The picker: the first page, the next through the cursor, then a search.
  await retype(page, '#bulk-content', 'P')
  await page.waitForFunction("document.querySelectorAll('#bulk-content-list [role=option]').length === 25")
  t.equal(await options(page, 'bulk-content'), 25, 'a page of 25')
  await clickButton(page, 'Load more')
  await page.waitForFunction("document.querySelectorAll('#bulk-content-list [role=option]').length === 30")
  t.pass('Load more reads the next page from the API: all 30')
  await noSerious(t, page, 'screens page with the content picker open')
  await page.focus('#bulk-content')
  await page.keyboard.type('oster 03')
  await page.waitForFunction(
    "document.querySelectorAll('#bulk-content-list [role=option]').length === 1 && document.querySelector('#bulk-content-list [role=option]').textContent.includes('Poster 03')",
  )
  t.pass('the search by name goes to the API')
  await page.keyboard.press('ArrowDown')
  await page.keyboard.press('Enter')
  t.match(await page.$eval('#bulk-content-hint', (e) => e.textContent), wanted, 'picked: its id shown')
  await clickButton(page, 'Assign to 3 screens')
  await textShown(page, 'Assigned Poster 03 to 3 screens.')
  await docShot(page, 'screens-bulk')

  const listed = (await c.call('GET', '/v1/screens')).body.data as { id: string; name: string; contentKind: string | null; contentId: string | null }[]
  t.same(
    listed
      .filter((s) => s.contentId === wanted)
      .map((s) => s.name)
      .sort(),
    ['Atrium', 'Cafe', 'Entrance'],
    'the API: the three chosen have it',
  )
  t.same(
    listed.filter((s) => s.contentId === null).map((s) => s.name),
    expectTwo(listed),
    'the other two have nothing',
  )
  const rows = (await page.$$eval('.scroller tbody tr:not(.spacer)', (rs) =>
    rs.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
  )) as string[][]
  const assigned = rows.filter((r) => r[3] === `media ${wanted}`).map((r) => r[1])
  t.same(assigned.sort(), ['Atrium', 'Cafe', 'Entrance'], "the rows' Assigned column shows it")

  // A viewer: no boxes, no bulk form.
  const viewer = await signedIn(t, c, 'vera@example.com', 'viewer')
  await viewer.goto(`${c.base}/console/screens`)
  await textShown(viewer, '5 screens')
  t.equal(await viewer.$('input[type=checkbox]'), null, 'no checkboxes for a viewer')
  await noSerious(t, viewer, 'screens page, viewer')
})

function expectTwo(listed: { name: string; contentId: string | null }[]): string[] {
  return listed.filter((s) => ['Bar', 'Desk'].includes(s.name)).map((s) => s.name)
}

t.test("a panel command and a screenshot from a screen's page, answered by a real device", { skip }, async (t) => {
  const c = await cloud(t)
  const device = await c.pair('Lobby')
  t.equal((await c.call('PATCH', `/v1/screens/${device.screenId}/panel`, { protocol: 'samsung-mdc', setId: 1 })).status, 200)
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, device)
  const jobs: Job[] = []
  dev.client.on('message', (topic, payload) => {
    if (topic !== topics.jobs(device.screenId)) return
    const r = parseJob(payload)
    if (r.ok) jobs.push(r.value)
  })
  const nextJob = async (kind: string): Promise<Job> => {
    const deadline = Date.now() + HANG_GUARD_MS // a hang guard
    for (;;) {
      const j = jobs.find((x) => x.kind === kind)
      if (j) return jobs.splice(jobs.indexOf(j), 1)[0]!
      if (Date.now() > deadline) throw new Error(`no ${kind} job; have ${jobs.map((x) => x.kind)}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  const page = await signedIn(t, c, 'ops@example.com', 'admin')
  await page.goto(`${c.base}/console/screens/${device.screenId}`)
  await page.waitForSelector('#h-panel')
  await page.waitForFunction("[...document.querySelectorAll('fieldset.buttons button')].length > 0")
  const buttons = (await page.$$eval('fieldset.buttons button', (bs) => bs.map((b) => b.textContent))) as string[]
  const power = buttons.find((b) => /power on/i.test(b)) ?? buttons.find((b) => /power/i.test(b))
  t.ok(power, `a power control among the panel's commands (${buttons.join(', ')})`)

  // The operator clicks it: the device gets the serial job on its jobs topic and answers.
  await clickButton(page, power!)
  // A command that switches the panel is confirmed first.
  await clickButton(page, `Yes, ${power}`)
  const job = await nextJob('serial')
  t.match(job, { kind: 'serial', bytesHex: /^([0-9a-fA-F]{2})+$/, protocol: 'samsung-mdc' }, 'the serial job, with the bytes to write')
  const queued = (await c.call('GET', `/v1/screens/${device.screenId}/serial-jobs`)).body.data as { id: string; bytesHex: string }[]
  t.ok(
    queued.some((j) => j.id === job.id),
    'the same job the API lists for the screen',
  )
  /** The device answers a serial job with `outcome` (and the panel's reply bytes). */
  const answer = (j: Job, outcome: 'ok' | 'nak', replyHex: string) =>
    dev.client.publishAsync(
      topics.jobResults(device.screenId),
      JSON.stringify({ jobId: j.id, kind: 'serial', sentHex: j.kind === 'serial' ? j.bytesHex : '', replyHex, outcome, at: new Date().toISOString() }),
      { qos: 1 },
    )
  await answer(job, 'ok', 'aaff0103411101')
  await textShown(page, `${power}: ok`)
  t.pass("the page shows the device's answer")
  t.equal((await c.call('GET', `/v1/serial-jobs/${job.id}`)).body.data.status, 'ok', 'and the API')

  // A refusal reads as one: the next command answered `nak`.
  const second = buttons.find((b) => b !== power && !/status/i.test(b)) ?? power!
  await clickButton(page, second)
  await clickButton(page, `Yes, ${second}`)
  const nakJob = await nextJob('serial')
  await answer(nakJob, 'nak', '')
  await textShown(page, `${second}: nak`)
  t.pass('a nak is shown as such')

  // The screenshot button: a job with an upload URL; the device PUTs a PNG with its credential.
  await clickButton(page, 'Take a screenshot')
  await textShown(page, 'Waiting for the screen…')
  const shot = await nextJob('screenshot')
  t.match(shot, { kind: 'screenshot', uploadUrl: /^\/v1\/devices\/screenshots\/shot_/ }, 'the screenshot job, with where to upload')
  const image = png(320, 180)
  const up = await fetch(`${c.base}${shot.kind === 'screenshot' ? shot.uploadUrl : ''}`, {
    method: 'PUT',
    headers: { 'content-type': 'image/png', authorization: `Basic ${Buffer.from(`${device.screenId}:${device.deviceSecret}`).toString('base64')}` },
    body: image,
  })
  t.equal(up.status, 200, 'the upload with the device credential is taken')
  await textShown(page, 'Screenshot taken.')
  await page.waitForFunction("(() => { const i = document.querySelector('img.shot'); return !!i && i.complete && i.naturalWidth === 320 })()")
  t.equal(await page.$eval('img.shot', (i) => i.getAttribute('src')), `/v1/screenshots/${shot.id}/image`, "the page shows the device's image")
  await noSerious(t, page, "a screen's page with a command's outcome and a screenshot")
  await page.$eval('#h-shot', (e) => e.scrollIntoView())
  await docShot(page, 'screen-device')

  // The screens page as a grid: switched to by keyboard, a card per screen with its last
  // screenshot (the one just taken), the card a link to the screen's page; the choice is kept
  // in the address; axe-core in both themes.
  await page.goto(`${c.base}/console/screens`)
  await page.waitForSelector('section[aria-label="Screens table"] tbody tr td a')
  await page.focus('.view-switch button[aria-pressed="false"]')
  t.equal(await page.evaluate('document.activeElement.textContent'), 'Grid of screenshots', 'the grid switch is reached by keyboard')
  await page.keyboard.press('Enter')
  await page.waitForFunction(
    `(() => { const i = document.querySelector('.screen-grid img[alt="Last screenshot of Lobby"]'); return !!i && i.complete && i.naturalWidth === 320 })()`,
  )
  t.equal(
    await page.$eval('.screen-grid img[alt="Last screenshot of Lobby"]', (i) => i.getAttribute('src')),
    `/v1/screenshots/${shot.id}/thumbnail`,
    "the card shows the screen's last screenshot, as its thumbnail",
  )
  t.equal(
    await page.$eval('.screen-grid img[alt="Last screenshot of Lobby"]', (i) => i.closest('a')?.getAttribute('href')),
    `/console/screens/${device.screenId}`,
    "the card is a link to the screen's page",
  )
  t.match(await page.evaluate('location.search'), /view=grid/, 'the grid is kept in the address')
  t.equal(await page.$eval('.view-switch button[aria-pressed="true"]', (b) => b.textContent), 'Grid of screenshots', 'the switch says which view is on')
  t.equal(await page.$('section[aria-label="Screens table"]'), null, 'no table beside the grid')
  await noSerious(t, page, 'the screens as a grid (light)')
  const dark = await signedIn(t, c, 'grid-dark@example.com', 'viewer', true)
  await dark.goto(`${c.base}/console/screens?view=grid`)
  await dark.waitForSelector('.screen-grid img[alt="Last screenshot of Lobby"]')
  await noSerious(t, dark, 'the screens as a grid (dark)')

  // A fleet: the grid draws its first 48 cards, and 48 more per "Show more screens" (the
  // rest of the page it holds, then the next page).
  const at = new Date().toISOString()
  const k = servicesOf(c.running.app).db.kysely
  await k
    .insertInto('screens')
    .values(Array.from({ length: 60 }, (_, i) => screenRow(`scr_zgrid${String(i).padStart(3, '0')}`, c.workspaceId, at, { name: `Grid ${i}` })))
    .execute()
  announce(k, { kind: 'workspaceScreens', workspaceId: c.workspaceId }) // written past the repository: the kept list pages learn it here
  const total = Number((await c.call('GET', '/v1/screens?limit=1&count=1')).body.total)
  await page.goto(`${c.base}/console/screens?view=grid`)
  await page.waitForSelector('.screen-card')
  const cards = () => page.$$eval('.screen-card', (l) => l.length)
  t.equal(await cards(), 48, 'the grid draws 48 cards at first')
  await textShown(page, `Show more screens (${total - 48} more)`)
  await page.evaluate(`[...document.querySelectorAll('button')].find((b) => b.textContent.startsWith('Show more screens')).click()`)
  await pageHolds(page, `document.querySelectorAll('.screen-card').length === ${total}`, `${total} cards after Show more`)
  t.equal(await cards(), total, 'the rest after Show more')
})

/** Elements reaching past the viewport's right edge (what makes a page scroll sideways), for the message. */
const OVERFLOW = `(() => {
  const w = 390
  const wide = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > w + 1 && !e.closest('.scroller'))
  return { scrollWidth: document.documentElement.scrollWidth, innerWidth: w, wide: wide.slice(0, 5).map((e) => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : '') + ' ' + Math.round(e.getBoundingClientRect().right)) }
})()`

// The pages an operator uses on a phone (the screens, a screen's page, a cast, the
// emergency) at 390×844 fit the width: nothing reaches past the right edge (tables wrap
// their cells; the screens table, when chosen, scrolls in its own box), in both themes, with
// no serious axe-core violation.
t.test('on a phone (390×844) the screens, a screen, a cast and the emergency fit the width, in both themes', { skip }, async (t) => {
  const c = await cloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_phone' })
  const device = await c.pair('Phone hall')
  const target = { contentKind: 'media', contentId: 'med_phone', scopeKind: 'screens', screenIds: [device.screenId] }
  const cast = await c.call('POST', '/v1/casts', target)
  t.equal(cast.status, 201, 'a cast to the screen')
  const emg = await c.call('POST', '/v1/emergencies', { ...target, message: 'Phone drill' })
  t.equal(emg.status, 201, 'an emergency on the screen')
  t.teardown(() => c.call('POST', `/v1/emergencies/${emg.body.data.id}/clear`, {}))
  const pages: [string, string][] = [
    ['/console/screens', 'a[href$="/screens/' + device.screenId + '"]'],
    [`/console/screens/${device.screenId}`, 'dl.facts'],
    [`/console/casts/${cast.body.data.id}`, '[data-state]'],
    [`/console/emergencies/${emg.body.data.id}`, '[data-state]'],
  ]
  for (const dark of [false, true]) {
    const theme = dark ? 'dark' : 'light'
    const page = await signedIn(t, c, `phone-${theme}@example.com`, 'admin', dark)
    await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true })
    for (const [path, ready] of pages) {
      await page.goto(`${c.base}${path}`)
      await page.waitForSelector(ready)
      // Everything the page loads is there (a mobile browser widens its layout to content wider than the screen).
      await page.waitForFunction(`!document.body.innerText.includes('Loading')`)
      const o = (await page.evaluate(OVERFLOW)) as { scrollWidth: number; innerWidth: number; wide: string[] }
      t.ok(o.innerWidth === 390 && o.scrollWidth <= 390 && !o.wide.length, `${path} (${theme}) fits 390 px: ${JSON.stringify(o)}`)
      await noSerious(t, page, `${path} on a phone (${theme})`)
    }
  }
})
