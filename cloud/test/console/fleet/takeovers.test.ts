// Casts and emergencies in the console, in a real Chromium against a real cloud with real
// MQTT devices: an emergency started from the page (after its confirmation step) to three
// screens, its reach counts (over its life: targeted, delivered, playing, displayed,
// unreachable) changing while the devices report applying it, then cleared; a cast to
// chosen screens started and cleared after its confirmation; a viewer offered no start or clear controls; no serious or
// critical axe-core violation on each page; the keyboard reaches the main controls.
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { servicesOf } from '../../../src/app.js'
import { connectDevice, reportPlaying } from '../../devicelink/link.js'
import { docShot, missingChromium, seriousViolations, signedIn, startConsoleCloud, textShown, retype } from '../console.js'

const skip = missingChromium(t) ?? false

/** The reach tiles as {state: count}. */
async function counts(page: Page): Promise<Record<string, number>> {
  return (await page.evaluate(
    "Object.fromEntries([...document.querySelectorAll('[data-state]')].map((li) => [li.dataset.state, Number(li.querySelector('strong').textContent)]))",
  )) as Record<string, number>
}

async function countIs(page: Page, state: string, n: number): Promise<void> {
  await page.waitForFunction(`document.querySelector('[data-state=${state}] strong')?.textContent === '${n}'`)
}

t.test('an emergency to three screens from the page: reach counts follow the devices live; cleared; a cast started and cleared', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_fire' }).add(c.workspaceId, { kind: 'media', id: 'med_a' })
  const s = servicesOf(c.running.app)
  const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
  const [a, b, d] = [await c.pair('Entrance'), await c.pair('Cafeteria'), await c.pair('Loading dock')]
  const devA = await connectDevice(t, url, a)
  const devB = await connectDevice(t, url, b)
  const devD = await connectDevice(t, url, d)
  await s.presence.idle()

  const page = await signedIn(t, c, 'ada@example.com', 'admin')
  const nav = await page.$$eval('nav[aria-label=Main] a', (as) => as.map((x) => x.textContent))
  t.same(
    nav.filter((n) => ['Casts', 'Emergencies', 'Approvals'].includes(n ?? '')),
    ['Casts', 'Emergencies', 'Approvals'],
    'in the navigation, in order',
  )
  await page.goto(`${c.base}/console/emergencies`)
  await page.waitForSelector('#emg-content')
  t.same(await seriousViolations(page), [], 'emergencies page: no serious or critical axe-core violation')

  // Keyboard: Tab from the content reaches the content field.
  await page.focus('#main')
  let reached = false
  for (let i = 0; i < 20 && !reached; i++) {
    await page.keyboard.press('Tab')
    reached = (await page.evaluate('document.activeElement?.id')) === 'emg-content'
  }
  t.ok(reached, 'Tab reaches the content field')

  // The API's 422 next to the field it names.
  await page.click('#h-start-emergency ~ button[type=submit], form[aria-labelledby=h-start-emergency] > button[type=submit]')
  await page.waitForSelector('.confirm')
  await page.click('.confirm button[type=submit]')
  await page.waitForSelector('#emg-content-error')
  t.match(await page.$eval('#emg-content-error', (e) => e.textContent), /contentId/, "an empty content id: the API's 422 beside the field")

  await page.type('#emg-content', 'med_fire')
  await page.type('#emg-message', 'Please leave the building')
  await page.click('form[aria-labelledby=h-start-emergency] > button[type=submit]')
  await page.waitForSelector('.confirm')
  t.match(await page.$eval('.confirm', (e) => e.textContent), /every screen/, 'a confirmation step says where it goes')
  await docShot(page, 'emergency-start')
  await page.click('.confirm button[type=submit]')
  await page.waitForFunction("location.pathname.startsWith('/console/emergencies/emg_')")
  const emgId = new URL(page.url()).pathname.split('/').pop()!
  await page.waitForSelector('[data-state]')
  await countIs(page, 'delivered', 3)
  t.same(await counts(page), { targeted: 3, delivered: 3, playing: 0, displayed: 0, unreachable: 0 }, 'handed to the broker for three screens')

  await reportPlaying(c, devA, (x) => x.emergency?.id === emgId, 'on')
  await countIs(page, 'displayed', 1)
  t.pass('a screen showing it counted as displayed while watching')
  await reportPlaying(c, devB, (x) => x.emergency?.id === emgId, 'off')
  await countIs(page, 'playing', 2)
  await reportPlaying(c, devD, (x) => x.emergency?.id === emgId, 'on')
  await countIs(page, 'displayed', 2)
  t.same(
    await counts(page),
    { targeted: 3, delivered: 3, playing: 3, displayed: 2, unreachable: 0 },
    "counts over the takeover's life: every screen targeted and delivered, three playing, two of them displayed",
  )
  t.match(await page.$$eval('tbody tr', (rs) => rs.map((r) => r.textContent)), [/Entrance.*displayed/, /Cafeteria.*applied/, /Loading dock.*displayed/])
  t.same(await seriousViolations(page), [], 'emergency page: no serious or critical axe-core violation')
  await docShot(page, 'emergency')

  await page.click('.page-head .actions button')
  await page.waitForSelector('.confirm')
  await page.click('.confirm button.danger')
  await textShown(page, 'screens released')
  t.equal((await c.call('GET', `/v1/emergencies/${emgId}`)).body.data.status, 'cleared', 'cleared')
  await page.goto(`${c.base}/console/emergencies`)
  await textShown(page, 'Please leave the building')
  await docShot(page, 'emergencies')

  // A cast to every screen, then cleared.
  await page.goto(`${c.base}/console/casts`)
  await page.waitForSelector('#cast-content')
  t.same(await seriousViolations(page), [], 'casts page: no serious or critical axe-core violation')
  await page.type('#cast-content', 'med_a')
  await retype(page, '#cast-minutes', '30')
  // Chosen screens: two of the three.
  await page.click('input[name=cast-scope][value=screens]')
  await page.waitForSelector(`input[type=checkbox][value=${a.screenId}]`)
  await page.click(`input[type=checkbox][value=${a.screenId}]`)
  await page.click(`input[type=checkbox][value=${b.screenId}]`)
  await page.click('form[aria-labelledby=h-start-cast] > button[type=submit]')
  await page.waitForFunction("location.pathname.startsWith('/console/casts/cast_')")
  const castId = new URL(page.url()).pathname.split('/').pop()!
  await textShown(page, '2 screens')
  t.match((await c.call('GET', `/v1/casts/${castId}`)).body.data, { scopeKind: 'screens', screenCount: 2 }, 'cast to the chosen screens')
  await reportPlaying(c, devA, (x) => x.casts[0]?.id === castId, 'on')
  await countIs(page, 'displayed', 1)
  t.same(await seriousViolations(page), [], 'cast page: no serious or critical axe-core violation')
  await docShot(page, 'cast')
  await page.click('.page-head .actions button')
  t.equal((await c.call('GET', `/v1/casts/${castId}`)).body.data.status, 'active', 'Clear cast asks first: still active')
  await page.waitForFunction("[...document.querySelectorAll('.page-head .actions button')].some((b) => b.textContent === 'Yes, Clear cast')")
  await page.evaluate("[...document.querySelectorAll('.page-head .actions button')].find((b) => b.textContent === 'Yes, Clear cast').click()")
  await page.waitForFunction("!document.querySelector('.page-head .actions button')")
  t.equal((await c.call('GET', `/v1/casts/${castId}`)).body.data.status, 'cleared', 'cast cleared')
  await page.goto(`${c.base}/console/casts`)
  await textShown(page, 'cleared')
  await docShot(page, 'casts')
})

t.test('a viewer sees casts and emergencies, and no start or clear controls', { skip }, async (t) => {
  const c = await startConsoleCloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_fire' }).add(c.workspaceId, { kind: 'media', id: 'med_a' })
  await c.pair('Lobby')
  const cast = (await c.call('POST', '/v1/casts', { contentKind: 'media', contentId: 'med_a', scopeKind: 'all' })).body.data
  const emg = (await c.call('POST', '/v1/emergencies', { contentKind: 'media', contentId: 'med_fire', scopeKind: 'all', message: 'Drill' })).body.data
  const page = await signedIn(t, c, 'vera@example.com', 'viewer')
  await page.goto(`${c.base}/console/emergencies`)
  await textShown(page, 'Drill')
  t.equal(await page.$('#h-start-emergency'), null, 'no start form')
  t.same(await seriousViolations(page), [], 'emergencies, viewer')
  await page.goto(`${c.base}/console/emergencies/${emg.id}`)
  await page.waitForSelector('[data-state]')
  t.equal(await page.$('.page-head .actions button'), null, 'no clear control')
  await page.goto(`${c.base}/console/casts`)
  await page.waitForSelector('tbody tr')
  t.equal(await page.$('#h-start-cast'), null, 'no start form')
  t.equal(await page.$('tbody button'), null, 'no clear buttons')
  t.same(await seriousViolations(page), [], 'casts, viewer')
  await page.goto(`${c.base}/console/casts/${cast.id}`)
  await page.waitForSelector('[data-state]')
  t.equal(await page.$('.page-head .actions button'), null, 'no clear control on the cast page')
})
