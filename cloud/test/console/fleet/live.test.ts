// Live pages in a real Chromium against a real cloud and a real MQTT device: a screen's page
// and the screens table follow what the device reports (what plays, the panel's power and
// input, the agent's version) as the event stream carries it, with no reload (a mark left
// in the page survives). The API's own event (`screen.reported`) is checked on a stream too.
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { topics, type Reported } from '@svc/shared/mqtt/index'
import { servicesOf } from '../../../src/app.js'
import { connectDevice, type DeviceClient } from '../../devicelink/link.js'
import { bearer, openStream } from '../../events/sse.js'
import { fileCloud, missingChromium, noSerious, PAGE_WAIT_MS, signedIn, textShown, type ConsoleCloud } from '../console.js'

const skip = missingChromium(t) ?? false
const cloud = fileCloud()

async function report(c: ConsoleCloud, dev: DeviceClient, r: Partial<Reported>): Promise<void> {
  const reported: Reported = {
    version: 1,
    playing: { source: 'none', contentKind: null, contentId: null },
    at: c.clock.now().toISOString(),
    ...r,
  }
  await dev.client.publishAsync(topics.reported(dev.screenId), JSON.stringify(reported), { qos: 1 })
}

const mark = (page: Page) => page.evaluate('window.__notReloaded = true')
const notReloaded = (page: Page) => page.evaluate('window.__notReloaded === true') as Promise<boolean>

t.test("a screen's page and the screens table follow a real device's reports without a reload", { skip }, async (t) => {
  const c = await cloud(t)
  const device = await c.pair('Foyer')
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, device)
  await servicesOf(c.running.app).presence.idle()
  const stream = await openStream(t, c.running.httpPort, bearer(c.apiKey))
  await stream.next((m) => m.event === 'ready')

  const page = await signedIn(t, c, 'live@example.com', 'admin')
  await page.goto(`${c.base}/console/screens/${device.screenId}`)
  await page.waitForSelector('dl.facts')
  await mark(page)

  // The device starts playing a file with its panel on: the page follows.
  const at = () => c.clock.now().toISOString()
  await report(c, dev, {
    playing: { source: 'assignment', contentKind: 'media', contentId: 'med_live_one' },
    panel: { power: 'on', input: 'HDMI1', at: at() },
    agentVersion: '9.1.0',
  })
  await textShown(page, 'med_live_one')
  await textShown(page, 'power on, input HDMI1')
  await textShown(page, '9.1.0')
  t.ok(await notReloaded(page), 'what plays, the panel and the agent version changed on the page without a reload')
  const event = await stream.next((m) => m.event === 'screen.reported')
  t.match(
    event.data.data,
    {
      screenId: device.screenId,
      screenName: 'Foyer',
      playing: { source: 'assignment', contentKind: 'media', contentId: 'med_live_one' },
      panel: { power: 'on', input: 'HDMI1' },
      agentVersion: '9.1.0',
    },
    'the stream carries screen.reported with the facts',
  )

  // The panel is switched off (and the same report again changes nothing more).
  await report(c, dev, {
    playing: { source: 'assignment', contentKind: 'media', contentId: 'med_live_one' },
    panel: { power: 'off', input: 'HDMI1', at: at() },
    agentVersion: '9.1.0',
  })
  await textShown(page, 'power off, input HDMI1')
  await report(c, dev, {
    playing: { source: 'assignment', contentKind: 'media', contentId: 'med_live_one' },
    panel: { power: 'off', input: 'HDMI1', at: at() },
    agentVersion: '9.1.0',
  })
  t.ok(await notReloaded(page), 'the panel switched off, shown without a reload')
  await noSerious(t, page, "a screen's page after live changes")

  // The screens table: the row's now playing and agent version follow.
  await page.goto(`${c.base}/console/screens`)
  await textShown(page, 'med_live_one')
  await mark(page)
  await report(c, dev, {
    playing: { source: 'assignment', contentKind: 'media', contentId: 'med_live_two' },
    panel: { power: 'off', input: 'HDMI1', at: at() },
    agentVersion: '9.2.0',
  })
  await textShown(page, 'med_live_two')
  await textShown(page, '9.2.0')
  t.ok(await notReloaded(page), "the screens table's row changed without a reload")
  const events = stream.messages.filter((m) => m.event === 'screen.reported').map((m) => m.data.data.playing.contentId)
  t.same(events, ['med_live_one', 'med_live_one', 'med_live_two'], 'one event per change: power off was one, a repeat none')
})

// The console's live connection is one per browser: twenty pages loaded in a row in one tab
// (each leaving its stream as it is hidden, the back/forward cache included) and three tabs
// open at once hold one stream on the server between them, the tabs that do not hold it get
// its events through the leader, a tab closing hands the stream on (resuming with
// Last-Event-ID, so an event sent while no tab held the stream still arrives), and a console
// request answers while all of that history exists.
t.test('twenty page loads and three tabs hold one event stream between them', { skip }, async (t) => {
  const c = await cloud(t)
  const device = await c.pair('Stream hall')
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, device)
  const hub = servicesOf(c.running.app).eventStream
  const page = await signedIn(t, c, 'streams@example.com', 'admin', { tabs: true })
  const paths = ['/console/', '/console/screens', `/console/screens/${device.screenId}`, '/console/content', '/console/emergencies']
  for (let i = 0; i < 20; i++) {
    await page.goto(`${c.base}${paths[i % paths.length]}`)
    await page.waitForSelector('h1#page-title')
  }
  const tabs = [page]
  for (let i = 0; i < 2; i++) {
    const tab = await page.browserContext().newPage()
    tab.setDefaultTimeout(page.getDefaultTimeout())
    tabs.push(tab)
  }
  for (const tab of tabs) {
    await tab.goto(`${c.base}/console/screens/${device.screenId}`)
    await tab.waitForSelector('dl.facts')
  }
  // One tab holds the stream and the server has said `ready` to it; the two others wait in
  // the lock's queue, listening on the channel. Only then is an event sure to reach a tab
  // that has none to resume from.
  const states = () => Promise.all(tabs.map((tab) => tab.evaluate('document.documentElement.dataset.live ?? "none"') as Promise<string>))
  await until(
    async () => (await states()).sort().join() === 'live,waiting,waiting' && hub.size === 1,
    async () => `one tab live and two waiting, one stream on the server (tabs: ${(await states()).join(', ')}; streams: ${hub.size})`,
  )
  const playing = (contentId: string) =>
    report(c, dev, {
      playing: { source: 'assignment', contentKind: 'media', contentId },
      panel: { power: 'on', input: 'HDMI1', at: c.clock.now().toISOString() },
    })
  await playing('med_stream_one')
  await shownIn(tabs, 'med_stream_one')
  // textShown reads a tab in the background too (the first two tabs are behind the third).
  t.equal(await tabs[0]!.evaluate('document.visibilityState'), 'hidden', 'the first tab is in the background')
  await textShown(tabs[0]!, 'med_stream_one')
  t.comment(`tabs: ${JSON.stringify(await Promise.all(tabs.map((tab) => tab.evaluate('[document.documentElement.dataset.live, document.visibilityState]'))))}`)
  t.equal(hub.size, 1, 'one event stream for twenty page loads and three tabs (a stream per page would be 3, or up to 23 with the cache)')
  const status = await page.evaluate(`fetch('/v1/screens').then((r) => r.status)`)
  t.equal(status, 200, 'a console request answers while the stream and the pages history exist')

  // The tabs close one by one but the last: the stream passes to the tab still open, which
  // resumes from the last event it was handed (sent before or after it connects, it arrives).
  await tabs[0]!.close()
  await tabs[1]!.close()
  await playing('med_stream_two')
  await shownIn([tabs[2]!], 'med_stream_two')
  const last = () => tabs[2]!.evaluate('document.documentElement.dataset.live ?? "none"') as Promise<string>
  await until(
    async () => (await last()) === 'live' && hub.size === 1,
    async () => `the last tab live on the one stream (tab: ${await last()}; streams: ${hub.size})`,
  )
  t.pass('the last tab open holds the one stream')
  await noSerious(t, tabs[2]!, "a screen's page in a tab sharing the stream")
})

/**
 * Waits until every tab shows `text`, reading each page from here (a tab in the background
 * runs no animation frames, which puppeteer's waitForFunction polls on); the hang guard's
 * message says, per tab, its part in the live connection, whether it is visible and shown.
 */
async function shownIn(tabs: Page[], text: string): Promise<void> {
  const probe = `({ live: document.documentElement.dataset.live ?? 'none', visibility: document.visibilityState, shown: document.body.innerText.includes(${JSON.stringify(text)}) })`
  const states = () => Promise.all(tabs.map((tab) => tab.evaluate(probe) as Promise<{ live: string; visibility: string; shown: boolean }>))
  await until(
    async () => (await states()).every((s) => s.shown),
    async () => `every tab to show ${text} (tabs: ${JSON.stringify(await states())})`,
  )
}

/** Waits until `ok()` holds, checking every 50 ms; a hang guard of minutes fails naming `what`. */
async function until(ok: () => Promise<boolean> | boolean, what: () => Promise<string> | string): Promise<void> {
  const deadline = Date.now() + PAGE_WAIT_MS
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${await what()}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
