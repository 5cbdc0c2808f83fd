// Setting a screen up from the console alone, in a real Chromium against a real cloud and a
// real MQTT device: its name, location and time zone; its panel profile (protocol from the
// presets, set id, port hint), "Test connection" sending the protocol's power.status that
// the device answers; Power off asked twice; axe finds nothing serious on the page.
import t from 'tap'
import { parseJob, topics, type Job } from '@svc/shared/mqtt/index'
import { panelPreset } from '@svc/shared/panels/index'
import { connectDevice } from '../../devicelink/link.js'
import { clickButton, fileCloud, retype, missingChromium, noSerious, signedIn, textShown } from '../console.js'
import { HANG_GUARD_MS } from '@svc/shared/testing'

const skip = missingChromium(t) ?? false
const cloud = fileCloud()
const GUARD = HANG_GUARD_MS

t.test('a screen set up from its page: details, panel profile and its test, power off confirmed', { skip }, async (t) => {
  const c = await cloud(t)
  const device = await c.pair('Lobby')
  const node = (await c.call('POST', '/v1/nodes', { name: 'Floor 1' })).body.data as { id: string }
  const dev = await connectDevice(t, `mqtt://127.0.0.1:${c.running.mqttPort}`, device)
  const jobs: Job[] = []
  dev.client.on('message', (topic, payload) => {
    if (topic !== topics.jobs(device.screenId)) return
    const r = parseJob(payload)
    if (r.ok) jobs.push(r.value)
  })
  const nextJob = async (): Promise<Job & { kind: 'serial' }> => {
    const deadline = Date.now() + GUARD // a hang guard
    for (;;) {
      const j = jobs.find((x) => x.kind === 'serial')
      if (j) return jobs.splice(jobs.indexOf(j), 1)[0] as Job & { kind: 'serial' }
      if (Date.now() > deadline) throw new Error(`hang guard: no serial job reached the device; have ${jobs.map((x) => x.kind)}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  const answer = (job: Job & { kind: 'serial' }, replyHex: string) =>
    dev.client.publishAsync(
      topics.jobResults(device.screenId),
      JSON.stringify({ jobId: job.id, kind: 'serial', sentHex: job.bytesHex, replyHex, outcome: 'ok', at: new Date().toISOString() }),
      { qos: 1 },
    )

  const page = await signedIn(t, c, 'setup@example.com', 'admin')
  await page.goto(`${c.base}/console/screens/${device.screenId}`)
  await page.waitForSelector('#h-details')

  // Details: name, location, time zone.
  await retype(page, '#screen-name', 'Lobby East')
  await page.select('#screen-node', node.id)
  await retype(page, '#screen-timezone', 'Europe/Berlin')
  await clickButton(page, 'Save details')
  await page.waitForFunction("document.querySelector('h1#page-title').textContent === 'Lobby East'", { timeout: GUARD })
  t.match(
    (await c.call('GET', `/v1/screens/${device.screenId}`)).body.data,
    { name: 'Lobby East', nodeId: node.id, timezone: 'Europe/Berlin' },
    'saved through the API',
  )

  // A bad time zone: the API's refusal next to the field.
  await retype(page, '#screen-timezone', 'Mars/Olympus')
  await clickButton(page, 'Save details')
  await page.waitForSelector('#screen-timezone-error, #h-details ~ form .error, section[aria-labelledby=h-details] .error', { timeout: GUARD })
  t.equal((await c.call('GET', `/v1/screens/${device.screenId}`)).body.data.timezone, 'Europe/Berlin', 'refused: nothing changed')
  await retype(page, '#screen-timezone', 'Europe/Berlin')

  // The panel profile, from the presets.
  await textShown(page, 'No panel profile')
  await page.select('#f-panel-protocol', 'samsung-mdc')
  await page.waitForSelector('#panel-setid')
  await retype(page, '#panel-setid', '1')
  await page.type('#panel-port', '/dev/ttyUSB0')
  await clickButton(page, 'Save panel')
  await textShown(page, 'Saved: ')
  t.match(
    (await c.call('GET', `/v1/screens/${device.screenId}/panel`)).body.data,
    { protocol: 'samsung-mdc', setId: 1, pollSeconds: 60, portHint: '/dev/ttyUSB0' },
    'the profile, with its port hint',
  )
  t.equal(dev.latest === undefined || !('portHint' in (dev.latest.panel ?? {})), true, 'the port hint is not sent to the device')

  // Test connection: the protocol's power.status reaches the device, its answer shows.
  await clickButton(page, 'Test connection')
  const status = await nextJob()
  const want = panelPreset('samsung-mdc', 1).commands.find((x) => x.key === 'power.status')!
  t.equal(status.bytesHex.toLowerCase(), want.hexPreview.replace(/ /g, '').toLowerCase(), 'the bytes of power.status')
  await answer(status, 'aaff0103411101')
  await textShown(page, 'the connection works')

  // Power off: asked twice, then sent; the device's answer shows.
  await page.waitForFunction("[...document.querySelectorAll('fieldset.buttons button')].some((b) => b.textContent === 'Power off')", { timeout: GUARD })
  await clickButton(page, 'Power off')
  t.equal(jobs.filter((j) => j.kind === 'serial').length, 0, 'nothing sent before the confirmation')
  await clickButton(page, 'Yes, Power off')
  const off = await nextJob()
  await answer(off, 'aaff0103411100')
  await textShown(page, 'Power off: ok')
  await noSerious(t, page, "a screen's page with its settings")
})
