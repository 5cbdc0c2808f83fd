// A schedule switching at local time, in a real browser: the agent (real cloud, real
// broker) decides with the shared evaluator on an injected clock; before 09:00 Paris time
// the fallback picture fills the screen, after it a two-zone layout shows its regions side
// by side (screenshot pixels), and the play log names each zone's item.
import t from 'tap'
import { once } from 'node:events'
import { topics } from '@svc/shared/mqtt/index'
import { Agent } from '../../src/Agent.js'
import { FakeTime, captureLog, tempDir, until } from '../helpers.js'
import { startCloud } from '../cloud.js'
import { fileServer, launch, missingChromium, near, screenshot, solid, solidPng, type Rgb } from './chromium.js'

const PALETTE: Record<string, Rgb> = { red: [230, 20, 20], green: [20, 200, 40], blue: [30, 40, 220] }
const skip = missingChromium(t)

t.test('a schedule turns from its fallback to a two-zone layout at 09:00 local time', { skip: skip ?? false }, async (t) => {
  const { page } = await launch(t)
  const media = await fileServer(t, {
    'red.png': { body: solidPng(64, 36, PALETTE.red!), type: 'image/png' },
    'green.png': { body: solidPng(32, 36, PALETTE.green!), type: 'image/png' },
    'blue.png': { body: solidPng(32, 36, PALETTE.blue!), type: 'image/png' },
  })
  const cloud = await startCloud(t)
  // 08:59:50 in Paris (UTC+2 in June).
  const time = new FakeTime('2026-06-01T06:59:50Z')
  const agent = new Agent({
    cloudUrl: cloud.base,
    dataDir: tempDir(t),
    playerPort: 0,
    clock: time.clock,
    playbackTimers: time,
    log: captureLog().log,
    pairing: { pollIntervalMs: 50, pollIntervalCapMs: 200 },
    backoff: { baseMs: 200, capMs: 1000 },
  })
  t.after(() => agent.stop())
  const code = once(agent, 'code')
  await agent.start()
  const [registration] = await code
  const connected = once(agent, 'connected')
  const screenId = await cloud.pair(registration.pairingCode)
  await connected
  await page.goto(`http://127.0.0.1:${agent.player.port}/`)

  const png = (file: string) => ({ url: media.url(file), mimeType: 'image/png' })
  await cloud.publish(topics.desired(screenId), {
    version: 900,
    screenId,
    timezone: 'Europe/Paris',
    assignment: { contentKind: 'schedule', contentId: 'sch_day' },
    schedule: {
      rules: [{ id: 'rule_morning', content: { kind: 'layout', id: 'lay_split' }, priority: 1, start: '09:00', end: '11:00' }],
      fallback: { kind: 'media', id: 'med_red' },
    },
    library: [
      { kind: 'media', id: 'med_red', content: { name: 'Red', ...png('red.png') } },
      {
        kind: 'layout',
        id: 'lay_split',
        content: {
          name: 'Split',
          config: {
            width: 1920,
            height: 1080,
            zones: [
              { id: 'left', x: 0, y: 0, width: 960, height: 1080, content: { kind: 'media', id: 'med_green', ...png('green.png') } },
              { id: 'right', x: 960, y: 0, width: 960, height: 1080, content: { kind: 'media', id: 'med_blue', ...png('blue.png') } },
            ],
          },
        },
      },
    ],
    casts: [],
    emergency: null,
    panel: null,
    generatedAt: time.clock.now().toISOString(),
  })
  t.ok(
    await until(5 * 60_000, async () => (solid(await screenshot(page), PALETTE) === 'red' ? true : undefined)),
    '08:59:50 local: the fallback fills the screen',
  )

  time.advance(15_000) // 09:00:05 local
  const split = await until(5 * 60_000, async () => {
    const bm = await screenshot(page)
    return near(bm.at(5, 5), PALETTE.green!) && near(bm.at(1274, 714), PALETTE.blue!) ? bm : undefined
  })
  if (!split) throw new Error('the layout never showed')
  for (const y of [2, 360, 717]) {
    t.ok(near(split.at(2, y), PALETTE.green!) && near(split.at(637, y), PALETTE.green!), `left region green at y=${y}`)
    t.ok(near(split.at(642, y), PALETTE.blue!) && near(split.at(1277, y), PALETTE.blue!), `right region blue at y=${y}`)
  }
  t.match(agent.state?.decision, { source: 'schedule', contentKind: 'layout', contentId: 'lay_split', ruleId: 'rule_morning' })

  await page.close()
  await agent.stop()
  const records = await agent.playLog.all()
  t.match(records[0], { source: 'schedule', contentId: 'med_red', itemId: 'med_red', zone: null })
  t.same(
    records
      .slice(1)
      .map((r) => `${r.zone}:${r.itemId}`)
      .sort(),
    ['left:med_green', 'right:med_blue'],
    'each zone’s play is recorded with its zone',
  )
  t.ok(records.slice(1).every((r) => r.contentKind === 'layout' && r.contentId === 'lay_split'))
})
