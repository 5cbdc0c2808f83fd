// Live pages in a real Chromium against a real cloud and a real MQTT device: a screen's page
// and the screens table follow what the device reports (what plays, the panel's power and
// input, the agent's version) as the event stream carries it, with no reload (a mark left
// in the page survives). The API's own event (`screen.reported`) is checked on a stream too.
import t from 'tap'
import type { Page } from 'puppeteer-core'
import { topics, type Reported } from '@svc/shared/mqtt/index'
import { servicesOf } from '../../src/app.js'
import { connectDevice, type DeviceClient } from '../devicelink/link.js'
import { bearer, openStream } from '../events/sse.js'
import { fileCloud, missingChromium, noSerious, signedIn, textShown, type ConsoleCloud } from './console.js'

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
