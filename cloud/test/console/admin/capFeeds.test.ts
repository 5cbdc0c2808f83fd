// CAP alert feeds in the console, in a real Chromium against a real cloud with real MQTT
// devices: reached from Emergencies; a push feed added (its push address and secret shown
// once, the secret then accepted by the push address), a pull feed refused for an unsafe
// address beside its field, then added; filters shown; the feed's alert log saying what
// happened to a pushed document and why; a sample alert sent to a chosen screen (the
// device's desired state holds the emergency, marked as a test; the other screen's does
// not) and cleared (the device loses it); a feed deleted after its confirmation; a viewer
// offered none of the controls; axe-core on each page. One cloud for the file.
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { connectDevice } from '../../devicelink/link.js'
import { capDoc } from '../../cap/capDocs.js'
import { clickButton, docShot, fileCloud, missingChromium, noSerious, signedIn, textShown, retype } from '../console.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const skip = missingChromium(t) ?? false
const cloud = fileCloud()
/** A hang guard for a device's desired state: its expiry names what was awaited. */
const GUARD = HANG_GUARD_MS

/** The alert log's rows as text, newest first. */
const logRows = (page: Page) => page.$$eval('tr[data-alert]', (rs) => rs.map((r) => r.textContent ?? ''))

t.test(
  'CAP feeds from Emergencies: push and pull feeds added, the alert log, a sample alert shown on a device and cleared, a feed deleted',
  { skip },
  async (t) => {
    const c = await cloud(t)
    c.content.add(c.workspaceId, { kind: 'media', id: 'med_warn' })
    const url = `mqtt://127.0.0.1:${c.running.mqttPort}`
    const [a, b] = [await c.pair('Atrium'), await c.pair('Boiler room')]
    const [da, db] = [await connectDevice(t, url, a), await connectDevice(t, url, b)]
    for (const d of [da, db]) await d.next(() => true, GUARD).catch(() => t.fail(`no first desired state for ${d.screenId}`))

    const page = await signedIn(t, c, 'cara@example.com', 'admin')
    await page.goto(`${c.base}/console/emergencies`)
    await page.waitForSelector('.page-head .actions a')
    await page.click('.page-head .actions a')
    await page.waitForFunction("location.pathname === '/console/emergencies/cap-feeds'")
    await page.waitForSelector('#h-add-feed')
    // The form shows at once; the table once the feeds have loaded.
    await page.waitForSelector('caption')
    t.match(await page.$eval('caption', (e) => e.textContent), /^0 CAP feeds/, 'no feed yet')
    await noSerious(t, page, 'CAP feeds page')

    // A push feed for Severe and Extreme alerts on every screen.
    await page.type('#f-feed-name', 'County alerts')
    await page.type('#cap-content', 'med_warn')
    await page.click('input[name=feed-severity][value=Extreme]')
    await page.click('input[name=feed-severity][value=Severe]')
    await clickButton(page, 'Add feed')
    await page.waitForSelector('.secret-value')
    const secret = await page.$eval('.secret-value', (e) => e.textContent ?? '')
    t.match(secret, /^capk_[A-Za-z0-9]{40}$/, 'the push secret is shown')
    const feeds = (await c.call('GET', '/v1/cap-feeds')).body.data as { id: string; name: string; pushUrl: string }[]
    t.equal(feeds.length, 1)
    const push = feeds[0]!
    t.match(await page.$eval('.secret', (e) => e.textContent), `${c.base}${push.pushUrl}`, 'with the address to POST to')
    await docShot(page, 'cap-feed-secret')

    // The secret shown is the one the push address accepts: a Minor alert, filtered out.
    const res = await fetch(`${c.base}${push.pushUrl}`, {
      method: 'POST',
      headers: { 'content-type': 'application/cap+xml', authorization: `Bearer ${secret}` },
      body: capDoc({ identifier: 'CNTY-1', severity: 'Minor', headline: 'FROST ADVISORY' }),
    })
    t.equal(res.status, 202, 'the push address accepts the secret shown')
    t.match(((await res.json()) as { data: unknown }).data, { state: 'ignored' })

    await clickButton(page, 'Done')
    await page.waitForFunction("!document.querySelector('.secret')")
    await textShown(page, 'severity Extreme, Severe')
    t.notOk((await page.content()).includes(secret), 'the secret is gone from the page once dismissed')

    // A pull feed: a private address refused beside its field, then a public one.
    await page.type('#f-feed-name', 'Weather service')
    await page.click('input[name=feed-mode][value=pull]')
    await page.waitForSelector('#f-feed-url')
    // The content and screens stay as they were for the next feed: the same content beneath it.
    t.equal(await page.$eval('#cap-content', (e) => (e as unknown as { value: string }).value), 'med_warn', 'the content stays chosen')
    await page.type('#f-feed-url', 'https://127.0.0.1/alerts.atom')
    await clickButton(page, 'Add feed')
    await page.waitForSelector('#f-feed-url-error')
    t.match(await page.$eval('#f-feed-url-error', (e) => e.textContent), /^url/, "an unsafe address: the API's refusal beside the field")
    await retype(page, '#f-feed-url', 'https://alerts.weather.example/active.atom')
    await clickButton(page, 'Add feed')
    await textShown(page, 'pull every 60 s')
    t.equal(await page.$('.secret'), null, 'a pull feed has no secret to show')
    t.match(await page.$eval('caption', (e) => e.textContent), /^2 CAP feeds/)
    await noSerious(t, page, 'CAP feeds page with two feeds')
    await docShot(page, 'cap-feeds')

    // The push feed's page: its log says what happened to the Minor alert and why.
    await page.click(`a[href$="/emergencies/cap-feeds/${push.id}"]`)
    await page.waitForSelector('tr[data-alert]')
    t.match(await logRows(page), [/FROST ADVISORY.*ignored.*severity Minor is not accepted by this feed/], 'the alert log: ignored, and why')

    // A sample alert to the Boiler room only: its device holds the emergency, marked as a test.
    await page.waitForSelector(`#f-sample-screen option[value=${b.screenId}]`)
    await page.select('#f-sample-screen', b.screenId)
    await clickButton(page, 'Send sample alert')
    await textShown(page, 'Sample started on Boiler room')
    const shown = await db.next((s) => Boolean(s.emergency), GUARD).catch(() => null)
    t.ok(shown, 'the chosen screen receives the emergency in its desired state')
    t.match(shown?.emergency, { contentId: 'med_warn', message: /^TEST: Sample alert\n/, alert: { test: true, headline: 'Sample alert' } }, 'marked as a test')
    t.notOk(da.latest?.emergency, 'the other screen is untouched')
    const emgId = shown!.emergency!.id
    t.match((await c.call('GET', `/v1/emergencies/${emgId}`)).body.data, { status: 'active', source: { capFeedId: push.id }, screenCount: 1 })
    await page.waitForFunction("document.querySelectorAll('tr[data-alert]').length === 2")
    t.match((await logRows(page))[0], /Sample alert.*Alert \(Test\).*started.*a sample sent from the console/, 'the sample in the log')
    await noSerious(t, page, 'CAP feed page with a sample on')
    await docShot(page, 'cap-feed')

    await clickButton(page, 'Clear sample alert')
    await textShown(page, 'The sample is off Boiler room.')
    const off = await db.next((s) => s.emergency === null && s.version > shown!.version, GUARD).catch(() => null)
    t.ok(off, 'the device loses the emergency')
    t.equal((await c.call('GET', `/v1/emergencies/${emgId}`)).body.data.status, 'cleared')
    await page.waitForFunction("document.querySelectorAll('tr[data-alert]').length === 3")
    t.match((await logRows(page))[0], /Cancel \(Test\).*cleared.*cancelled by the sender/, 'the cancel in the log')

    // What the sample endpoints refuse: another screen id, a pushed alert taken for a sample.
    t.match(
      await c.call('POST', `/v1/cap-feeds/${push.id}/sample`, { screenId: 'scr_nope' }),
      { status: 422, body: { error: 'no_screens' } },
      'a screen the caller does not reach: refused as an emergency to it would be',
    )
    const pushed = (await c.call('GET', `/v1/cap-feeds/${push.id}/alerts`)).body.data.find((x: { identifier: string }) => x.identifier === 'CNTY-1')
    t.equal((await c.call('POST', `/v1/cap-feeds/${push.id}/sample/clear`, { alertId: pushed.id })).status, 404, "a sender's alert is no sample")
    t.equal((await c.call('POST', '/v1/cap-feeds/capf_nope/sample', { screenId: b.screenId })).status, 404, 'an unknown feed')
    // A sender posing as the console's samples gets none of their freedom: its Test alert meets the feed's filters.
    const forged = await fetch(`${c.base}${push.pushUrl}`, {
      method: 'POST',
      headers: { 'content-type': 'application/cap+xml', authorization: `Bearer ${secret}` },
      body: capDoc({ identifier: 'FORGED-1', sender: 'signage-console-sample', status: 'Test', severity: 'Extreme' }),
    })
    const forgedAnswer = ((await forged.json()) as { data: { alertId: string; state: string } }).data
    t.match(forgedAnswer, { state: 'ignored' }, "a pushed document with the samples' sender is filtered as any other")
    t.equal((await c.call('POST', `/v1/cap-feeds/${push.id}/sample/clear`, { alertId: forgedAnswer.alertId })).status, 404, 'and is no sample to clear')

    // Deleting the pull feed from the list, after its confirmation.
    await page.click('a[href$="/emergencies/cap-feeds"]')
    await page.waitForSelector('button[aria-label="Delete Weather service"]')
    await page.click('button[aria-label="Delete Weather service"]')
    t.equal((await c.call('GET', '/v1/cap-feeds')).body.data.length, 2, 'Delete asks first')
    await page.click('button[aria-label="Yes, Delete Weather service"]')
    await textShown(page, 'Deleted Weather service')
    t.same(
      (await c.call('GET', '/v1/cap-feeds')).body.data.map((f: { name: string }) => f.name),
      ['County alerts'],
      'deleted',
    )
  },
)

t.test('a viewer sees the feeds and their log, and no add, delete or sample controls', { skip }, async (t) => {
  const c = await cloud(t)
  c.content.add(c.workspaceId, { kind: 'media', id: 'med_view' })
  const feed = (await c.call('POST', '/v1/cap-feeds', { name: 'Campus siren', contentKind: 'media', contentId: 'med_view' })).body.data
  const page = await signedIn(t, c, 'val@example.com', 'viewer')
  await page.goto(`${c.base}/console/emergencies/cap-feeds`)
  await textShown(page, 'Campus siren')
  t.equal(await page.$('#h-add-feed'), null, 'no add form')
  t.equal(await page.$('button[aria-label^="Delete"]'), null, 'no delete buttons')
  await noSerious(t, page, 'CAP feeds, viewer')
  await page.goto(`${c.base}/console/emergencies/cap-feeds/${feed.id}`)
  await page.waitForSelector('#h-alert-log')
  await textShown(page, 'Alert log')
  t.equal(await page.$('#h-sample'), null, 'no sample form')
  await noSerious(t, page, 'CAP feed, viewer')
})
